package syncular.jakarta.sync;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.RowKey;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.wire.ErrorCode;

/**
 * {@code GET <mount>/blobs/{blobId}} (SPEC §5.9.5; REF blob-handlers.ts {@code downloadBlob}): re-authorized on every
 * request, and a blobId is never a capability: the actor may download iff some row of the partition's reference
 * index (§5.9.4) passes the §3.4 stored-row scope check against the actor's scopes, resolved once. An unknown blob
 * is 404 {@code blob.not_found}; a known one no row authorizes (or a failing resolver) is 403
 * {@code blob.forbidden}. After the serve gate, as a segment download (RFC 0007: the rows it authorizes from belong
 * to the schema this process serves).
 *
 * <p>With {@link BlobUrls} active, an authorized download answers a URL instead of the bytes (§5.9.5 always-issue:
 * this server leaves the egress path); with the native scheme that URL comes back here as {@link #downloadSigned},
 * which needs no credentials. Thread-safe.
 */
public final class BlobDownload {
    /** Referencing rows read per round trip while looking for one that authorizes. */
    static final int PAGE = 256;

    private final ServerStorage storage;
    private final BlobStore store;
    private final ScopeResolver resolver;
    private final Clock clock;
    private final CompiledSchema schema;
    private final Supplier<List<CheckpointDeclaration>> declarations;
    private final BlobUrls urls;
    private final Optional<SignedUrls> signer;

    /**
     * {@code urls}: how an authorized download answers ({@link BlobUrls#NONE}: inline); {@code signer}: the native
     * scheme's verifier for {@link #downloadSigned}, empty when this server mints no native blob URLs.
     */
    public BlobDownload(ServerStorage storage, BlobStore store, ScopeResolver resolver, Clock clock,
                        CompiledSchema schema, Supplier<List<CheckpointDeclaration>> declarations, BlobUrls urls,
                        Optional<SignedUrls> signer) {
        this.storage = storage;
        this.store = store;
        this.resolver = resolver;
        this.clock = clock;
        this.schema = schema;
        this.declarations = declarations;
        this.urls = urls;
        this.signer = signer;
    }

    /** What an authorized download answers: the blob to stream, or the URL to fetch it from. */
    public sealed interface Answer permits Inline, Url { }

    /** Stream {@code blob} from the store. */
    public record Inline(BlobStore.BlobInfo blob) implements Answer { }

    /** §5.9.5: {@code {"url","urlExpiresAtMs"}}, and no bytes. */
    public record Url(String blobId, SignedUrls.Issued issued) implements Answer { }

    /** The authorized download of {@code blobId}, after every check. */
    public Answer download(Identity identity, String blobId) {
        BlobStore.BlobInfo blob = authorize(identity, blobId);
        if (!urls.active()) return new Inline(blob);
        // never before the row-derived check above: the URL is a bearer grant to exactly these bytes (§5.9.5)
        return new Url(blobId, urls.download(identity.partition(), blobId, clock.nowMs()));
    }

    /**
     * {@code GET <mount>/blobs/{blobId}?st=…} (§5.9.5 native scheme): no host authentication; the token is the whole
     * grant ({@link SignedUrls#verifyDownload}: 403 {@code blob.forbidden} when tampered with, for another blob or
     * expired). A blob gone since issuance (only an unreferenced one can be swept) is 404 {@code blob.not_found}.
     */
    public Signed downloadSigned(String blobId, String token) {
        SignedUrls verifier = signer.orElseThrow(() -> new SyncException(ErrorCode.BLOB_NOT_FOUND,
                "signed blob URLs are not configured on this server"));
        SignedUrls.BlobGrant grant = verifier.verifyDownload(token, blobId, clock.nowMs());
        BlobStore.BlobInfo blob = store.find(grant.partition(), grant.blobId())
                .orElseThrow(() -> new SyncException(ErrorCode.BLOB_NOT_FOUND, "unknown blob (§5.9.5)"));
        return new Signed(blob, grant.exp());
    }

    /** A signed-URL download: the blob to stream, and the token's {@code exp} (unix seconds) that bounds caching. */
    public record Signed(BlobStore.BlobInfo blob, long expSeconds) { }

    private BlobStore.BlobInfo authorize(Identity identity, String blobId) {
        storage.touchPartition(identity.partition(), clock.nowMs(), UUID.randomUUID().toString());
        ServeGatePolicy.enforce(storage.readServeGate(identity.partition(), schema.version()), schema.version(),
                declarations.get());
        if (!BlobStore.isBlobId(blobId)) throw new SyncException(ErrorCode.BLOB_NOT_FOUND, "malformed blobId (§5.9.1)");
        Optional<BlobStore.BlobInfo> info = store.find(identity.partition(), blobId);
        if (info.isEmpty()) throw new SyncException(ErrorCode.BLOB_NOT_FOUND, "unknown blob (§5.9.5)");
        Map<String, List<String>> allowed;
        try {
            allowed = resolver.resolveScopes(identity);
        } catch (RuntimeException e) {
            // fail closed; an auth lease never authorizes a download either (REF: an outage denies)
            throw new SyncException(ErrorCode.BLOB_FORBIDDEN, "scope resolution failed (§5.9.5)");
        }
        RowKey after = null;
        while (true) {
            List<ServerStorage.BlobReference> page = storage.blobReferences(identity.partition(), blobId, after, PAGE);
            for (ServerStorage.BlobReference ref : page) {
                Optional<TableSchema> table = schema.table(ref.table());
                if (table.isPresent() && Scopes.authorizeWrite(table.get(), ref.scopes(), allowed)) return info.get();
            }
            if (page.size() < PAGE) break;
            ServerStorage.BlobReference last = page.get(page.size() - 1);
            after = new RowKey(last.table(), last.rowId());
        }
        // never 404 here: existence and authorization must not be told apart (§5.9.5)
        throw new SyncException(ErrorCode.BLOB_FORBIDDEN, "no referencing row authorizes this actor (§5.9.5)");
    }
}
