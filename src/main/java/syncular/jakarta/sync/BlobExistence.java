package syncular.jakarta.sync;

import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.DecodeException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Op;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.TypeTag;

/**
 * The push-time existence check (SPEC §5.9.6, §6.6; REF push.ts {@code checkAndRecordBlobs}): an upsert whose row
 * carries a non-NULL {@code blob_ref} applies only if the blob it names was uploaded to the partition, else the
 * operation is {@code blob.not_found} and its commit is rejected whole.
 *
 * <p>Split in two so that the lock is never held for it: {@link #lookUp} asks the store, once per request and before
 * the request joins its partition's group commit, about every blob the request's payloads name; {@link #check}
 * then decides each operation under the lock from that answer, on the row as the pipeline will write it. A blob the
 * row keeps unchanged from its stored version is not asked about again: it is referenced, and the sweep never
 * deletes a referenced blob (§5.9.2). A request with no {@code blob_ref} value costs nothing.
 *
 * <p>What stays open (as in the reference, whose check is a {@code has} on the store): a blob that was present at
 * the look-up and swept before the commit. The sweep deletes only blobs unreferenced for the whole grace period
 * (§5.9.2, default 24 h), and a re-upload renews a blob's upload time, so a client that uploads before it pushes
 * (§5.9.7 B4) cannot meet it.
 */
final class BlobExistence {
    private BlobExistence() { }

    /** Whether any table of the schema has a {@code blob_ref} column (else nothing here runs). */
    static boolean any(CompiledSchema schema) {
        return schema.tables().stream().anyMatch(BlobExistence::hasBlobRefs);
    }

    static boolean hasBlobRefs(TableSchema table) {
        return table.columns().stream().anyMatch(c -> c.type() == TypeTag.BLOB_REF);
    }

    /**
     * The blobs of {@code commits}' upsert payloads present in the partition, in one look-up: the empty set when none
     * names a blob (no look-up), or when there is no store ({@code store} null: nothing can be present). A blob
     * absent from the store may have been PUT straight to it through a presigned grant: those bytes are checked
     * against their content address now, at reference time (§5.9.3), and count only if they pass.
     */
    static Set<String> lookUp(BlobStore store, String partition, CompiledSchema schema, WriteSemantics semantics,
                              List<PushCommit> commits, long nowMs) {
        Set<String> named = new LinkedHashSet<>();
        for (PushCommit commit : commits) {
            for (PushCommit.Operation op : commit.operations()) {
                if (op.op() != Op.UPSERT) continue;
                TableSchema table = schema.table(op.table()).orElse(null);
                if (table == null || !hasBlobRefs(table)) continue;
                Object[] values = semantics.pushedValues(table, op.payload());
                if (values != null) named.addAll(ids(table, values));
            }
        }
        if (named.isEmpty() || store == null) return Set.of();
        Set<String> present = new LinkedHashSet<>(store.present(partition, named));
        if (present.size() < named.size()) {
            List<String> absent = named.stream().filter(id -> !present.contains(id)).toList();
            try {
                present.addAll(store.adoptDirectUploads(partition, absent, nowMs));
            } catch (IOException e) {
                throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
            }
        }
        return Set.copyOf(present);
    }

    /**
     * The operation's rejection, or null: every blob {@code values} names is in {@code present} or is the same blob
     * the stored row ({@code storedValues}, null for an insert) names in that column. {@code storeConfigured} false:
     * the server has no blob store, and the reference's answer for that case is given.
     */
    static OperationResult check(TableSchema table, Object[] values, Object[] storedValues, int opIndex,
                                 Set<String> present, boolean storeConfigured) {
        List<ColumnSchema> columns = table.columns();
        for (int c = 0; c < columns.size(); c++) {
            if (columns.get(c).type() != TypeTag.BLOB_REF || values[c] == null) continue;
            String id = id(values[c]);
            if (id == null || present.contains(id)) continue;
            if (storedValues != null && storedValues[c] != null && Objects.equals(id, id(storedValues[c]))) continue;
            // the reference names the blobId here; our messages never carry row data (ARCHITECTURE, Conventions)
            String message = storeConfigured ? "push references a blob that has not been uploaded (§5.9.6)"
                    : "row references a blob but the server has no blob store (§5.9.6)";
            return new OperationResult.Failed(opIndex, ErrorCode.BLOB_NOT_FOUND.wire(), message,
                    ErrorCode.BLOB_NOT_FOUND.retryable(), null);
        }
        return null;
    }

    private static Set<String> ids(TableSchema table, Object[] values) {
        Set<String> out = new LinkedHashSet<>();
        List<ColumnSchema> columns = table.columns();
        for (int c = 0; c < columns.size(); c++) {
            if (columns.get(c).type() == TypeTag.BLOB_REF && values[c] != null) {
                String id = id(values[c]);
                if (id != null) out.add(id);
            }
        }
        return out;
    }

    /** The blobId of a {@code blob_ref} value; null for one the codec would refuse (it refuses it later). */
    private static String id(Object value) {
        if (!(value instanceof String raw)) return null;
        try {
            return BlobRef.parse(raw).blobId();
        } catch (DecodeException e) {
            return null;
        }
    }
}
