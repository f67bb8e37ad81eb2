package syncular.jakarta.storage;

/**
 * Answer of {@code hasSourceChangesAbove} (seeds/003): {@code UNVERIFIABLE} when the pruning horizon passed the
 * asked seq and nothing newer was found, so an empty scan proves nothing.
 */
public enum SourceCoverage { CLEAN, CHANGED, UNVERIFIABLE }
