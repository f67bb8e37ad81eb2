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
 * failing resolver or a digest that matches no live publication is {@code sync.forbidden}. A signed-URL fetch
 * ({@link #downloadSigned}) carries no identity: the token is the grant (§5.4).
 */
public final class SegmentDownload {
    private final ServerStorage storage;
    private final SegmentStore segments;
    private final ScopeResolver resolver;
    private final Clock clock;
    private final CompiledSchema schema;
    private final Supplier<List<CheckpointDeclaration>> declarations;
    private final Optional<SignedUrls> urls;

    /** {@code urls}: the §5.4 verifier, or empty when signed URLs are off (a token is then refused). */
    public SegmentDownload(ServerStorage storage, SegmentStore segments, ScopeResolver resolver, Clock clock,
                           CompiledSchema schema, Supplier<List<CheckpointDeclaration>> declarations,
                           Optional<SignedUrls> urls) {
        this.urls = urls;
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

    /** A signed-URL download: the bytes, and the token's {@code exp} (unix seconds) that bounds caching them. */
    public record Signed(byte[] bytes, long expSeconds) { }

    /**
     * {@code GET /segments/{id}?st=…} (§5.4): no host authentication and no scopes header. The token's MAC, form,
     * segment and expiry are checked first ({@link SignedUrls#verify}); then some publication of this segment must
     * carry the token's scope digest in the partition its audience names (else {@code sync.forbidden}: a genuine token
     * bound to other scopes or another partition). That partition's serve gate applies as on the direct path; a
     * matching publication that expired is {@code sync.segment_expired}, an unknown segment {@code sync.not_found}.
     */
    public Signed downloadSigned(String segmentId, String token) {
        SignedUrls signer = urls.orElseThrow(() -> new SyncException(ErrorCode.SYNC_NOT_FOUND,
                "signed segment URLs are not configured on this server"));
        long now = clock.nowMs();
        SignedUrls.Claims claims = signer.verify(token, segmentId, now);
        List<SegmentStore.Publication> pubs = segments.publications(segmentId);
        if (pubs.isEmpty()) throw new SyncException(ErrorCode.SYNC_NOT_FOUND, "unknown segment (§5.5)");
        List<SegmentStore.Publication> matching = pubs.stream()
                .filter(p -> p.key().scopeDigest().equals(claims.scopeDigest())
                        && signer.audience(p.key().partition()).equals(claims.audience()))
                .toList();
        if (matching.isEmpty()) {
            throw new SyncException(ErrorCode.SYNC_FORBIDDEN, "the signed URL is not valid for this segment (§5.4)");
        }
        String partition = matching.get(0).key().partition();
        ServeGatePolicy.enforce(storage.readServeGate(partition, schema.version()), schema.version(),
                declarations.get());
        if (matching.stream().noneMatch(p -> p.liveAt(now))) {
            throw new SyncException(ErrorCode.SYNC_SEGMENT_EXPIRED,
                    "segment TTL elapsed; pull again for fresh descriptors (§5.1)");
        }
        if (schema.table(matching.get(0).key().table()).isEmpty()) {
            throw new SyncException(ErrorCode.SYNC_NOT_FOUND, "the segment's table is no longer served");
        }
        byte[] bytes = segments.bytes(segmentId)
                .orElseThrow(() -> new SyncException(ErrorCode.SYNC_NOT_FOUND, "unknown segment (§5.5)"));
        return new Signed(bytes, claims.exp());
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
