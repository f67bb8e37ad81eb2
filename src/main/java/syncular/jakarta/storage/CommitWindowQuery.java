package syncular.jakarta.storage;

import java.util.Objects;

/**
 * Incremental pull window (SPEC §4.5): changes of {@code table} matching {@code scopes} in commits
 * {@code afterSeq < commitSeq <= throughSeq}, oldest first; whole commits until {@code limitChanges} changes are
 * reached (an oversized commit goes alone). Storage selects candidates through the change-scope index, never by
 * scanning the log.
 */
public record CommitWindowQuery(String table, ScopeFilter scopes, long afterSeq, long throughSeq, int limitChanges) {
    public CommitWindowQuery {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(scopes, "scopes");
        if (limitChanges < 1) throw new IllegalArgumentException("limitChanges must be >= 1");
    }
}
