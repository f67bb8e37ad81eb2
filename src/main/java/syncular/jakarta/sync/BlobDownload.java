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
 * to the schema this process serves). Thread-safe.
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

    public BlobDownload(ServerStorage storage, BlobStore store, ScopeResolver resolver, Clock clock,
                        CompiledSchema schema, Supplier<List<CheckpointDeclaration>> declarations) {
        this.storage = storage;
        this.store = store;
        this.resolver = resolver;
        this.clock = clock;
        this.schema = schema;
        this.declarations = declarations;
    }

    /** The blob the actor may download, after every check; the caller streams it from the store. */
    public BlobStore.BlobInfo authorize(Identity identity, String blobId) {
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
