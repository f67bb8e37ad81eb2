package syncular.jakarta.sync;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.wire.CanonicalJson;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * {@code GET /segments/{id}} (SPEC §5.5, REF segment-download.ts, seeds/002 publications): every request is
 * re-authorized from {@code X-Syncular-Scopes}, after the serve gate (RFC 0007: across a migration this process
 * refuses with 503 {@code sync.schema_not_ready} here as on {@code POST /sync}, with the same declaration set). A
 * segment published under another partition or log epoch is
 * {@code sync.not_found}; one whose publications all expired is {@code sync.segment_expired}; a revoked grant, a
 * failing resolver or a digest that matches no live publication is {@code sync.forbidden}.
 */
public final class SegmentDownload {
    private final ServerStorage storage;
    private final SegmentStore segments;
    private final ScopeResolver resolver;
    private final Clock clock;
    private final CompiledSchema schema;
    private final Supplier<List<CheckpointDeclaration>> declarations;

    public SegmentDownload(ServerStorage storage, SegmentStore segments, ScopeResolver resolver, Clock clock,
                           CompiledSchema schema, Supplier<List<CheckpointDeclaration>> declarations) {
        this.storage = storage;
        this.segments = segments;
        this.resolver = resolver;
        this.clock = clock;
        this.schema = schema;
        this.declarations = declarations;
    }

    /** The bytes to send, after every check; the caller adds the §5.5 headers. */
    public byte[] download(Identity identity, String segmentId, String scopesHeader) {
        long now = clock.nowMs();
        PartitionRegistryEntry registry = storage.touchPartition(identity.partition(), now,
                java.util.UUID.randomUUID().toString());
        ServeGatePolicy.enforce(storage.readServeGate(identity.partition(), schema.version()), schema.version(),
                declarations.get());
        List<SegmentStore.Publication> pubs = segments.publications(segmentId, identity.partition(), registry.logEpoch());
        if (pubs.isEmpty()) throw new SyncException(ErrorCode.SYNC_NOT_FOUND, "unknown segment (§5.5)");
        if (pubs.stream().noneMatch(p -> p.liveAt(now))) {
            throw new SyncException(ErrorCode.SYNC_SEGMENT_EXPIRED,
                    "segment TTL elapsed; pull again for fresh descriptors (§5.1)");
        }
        TableSchema table = schema.table(pubs.get(0).key().table())
                .orElseThrow(() -> new SyncException(ErrorCode.SYNC_NOT_FOUND, "the segment's table is no longer served"));
        Map<String, List<String>> requested = parseScopesHeader(scopesHeader);
        for (Map.Entry<String, List<String>> e : requested.entrySet()) {
            if (table.scopeForVariable(e.getKey()).isEmpty() || e.getValue().contains(Scopes.ANY)) {
                throw new SyncException(ErrorCode.SYNC_INVALID_SUBSCRIPTION, "invalid requested scopes (§3.2)");
            }
        }
        Map<String, List<String>> allowed;
        try {
            allowed = resolver.resolveScopes(identity);
        } catch (RuntimeException e) {
            allowed = null; // fail closed
        }
        Optional<Map<String, List<String>>> effective = Scopes.effective(requested, allowed);
        if (effective.isEmpty()) throw new SyncException(ErrorCode.SYNC_FORBIDDEN, "segment scopes not held (§5.5)");
        String digest = CanonicalJson.scopeDigest(effective.get());
        List<SegmentStore.Publication> matching = pubs.stream()
                .filter(p -> p.key().scopeDigest().equals(digest)).toList();
        if (matching.isEmpty()) throw new SyncException(ErrorCode.SYNC_FORBIDDEN, "scope digest mismatch (§3.5, §5.5)");
        if (matching.stream().noneMatch(p -> p.liveAt(now))) {
            throw new SyncException(ErrorCode.SYNC_SEGMENT_EXPIRED,
                    "segment TTL elapsed; pull again for fresh descriptors (§5.1)");
        }
        return segments.bytes(segmentId)
                .orElseThrow(() -> new SyncException(ErrorCode.SYNC_NOT_FOUND, "unknown segment (§5.5)"));
    }

    static Map<String, List<String>> parseScopesHeader(String header) {
        if (header == null) throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "X-Syncular-Scopes is required");
        Object parsed;
        try {
            parsed = Json.parse(header);
        } catch (Json.JsonException e) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "X-Syncular-Scopes is not JSON");
        }
        if (!(parsed instanceof Map<?, ?> m)) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "X-Syncular-Scopes must be a map");
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getValue() instanceof List<?> l) || l.stream().anyMatch(v -> !(v instanceof String))) {
                throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST,
                        "X-Syncular-Scopes values must be string lists (§0)");
            }
            out.put((String) e.getKey(), l.stream().map(String.class::cast).toList());
        }
        return out;
    }

}
