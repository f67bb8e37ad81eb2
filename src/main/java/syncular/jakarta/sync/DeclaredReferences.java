package syncular.jakarta.sync;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import syncular.jakarta.schema.ColumnReference;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.IncomingReference;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.StorageTransaction;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.RejectionDetails;

/**
 * Declared-reference enforcement (SPEC §6.11 at 008c36d5, WIRE3-DELTA §5), once per commit after every client
 * operation is staged and before the §6.8 commit validator, on the candidate state, for every wire version (the
 * references are the schema's, not the wire's):
 * <ol>
 *   <li>every staged upsert's non-NULL reference columns (of the whole final row, as the reference checks) must name
 *       a parent row that exists in the child's own scopes, else {@code missing_parent};</li>
 *   <li>every staged delete of an existing row visits the rows that reference it, breadth-first with a visited set,
 *       their pages read through the child-column index: RESTRICT with a child rejects
 *       ({@code restricted_delete}); CASCADE appends a delete of each child and visits it in turn; SET NULL appends
 *       an upsert of each child that sets only that column to NULL.</li>
 * </ol>
 * Appended operations get indexes from the number of client operations on, go through the row validators and into
 * the commit validator's evidence, and count against the per-commit cap ({@code cascade_limit} past it). Every
 * rejection is a {@code sync.reference_violation} with its details, blamed on the client operation it comes from.
 *
 * <p>Two deliberate differences from the reference server, both about rows the actor did not name: a parent only
 * counts as present when its stored scopes equal the child's, so a reference never links rows of different scope
 * values and a cascade can never reach a row outside the scopes of the delete that started it (the reference
 * compares scope <em>patterns</em> at compile time only); and a child that SET NULL detached is not visited as if it
 * had been deleted (the reference queues it with the deleted rows, so its own children would be restricted, deleted
 * or detached although it stays).
 */
public final class DeclaredReferences {
    /** One page of children read at a time. */
    static final int PAGE = 1000;

    /** The default of {@code syncular.limits.max-cascade-operations-per-commit} (the reference's default). */
    public static final int DEFAULT_MAX_CASCADE_OPERATIONS = 1000;

    /** A client operation of the commit as staged: its final values for an upsert, null for a delete. */
    record Staged(TableSchema table, String rowId, int opIndex, Object[] values, boolean existed) { }

    /** What the push pipeline does for an appended operation; a rejection (blamed on {@code origin}) or null. */
    interface Appender {
        OperationResult delete(TableSchema child, StoredRow row, int opIndex, int origin);

        OperationResult detach(TableSchema child, StoredRow row, int column, int opIndex, int origin);
    }

    /** The candidate state of a row, as the commit's staged writes left it. */
    interface CandidateRows {
        Optional<StoredRow> get(String table, String rowId);
    }

    private DeclaredReferences() { }

    /** Whether any operation of {@code commit} touches a table that declares or is named by a reference. */
    static boolean involved(CompiledSchema schema, PushCommit commit) {
        if (schema.tables().stream().allMatch(t -> t.references().isEmpty())) return false;   // the common schema
        for (PushCommit.Operation op : commit.operations()) {
            Optional<TableSchema> t = schema.table(op.table());
            if (t.isPresent() && (!t.get().references().isEmpty() || !schema.referencedBy(op.table()).isEmpty())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Enforces the commit's references; the rejection, or null when it passes (appended operations are then
     * written through {@code appender}).
     */
    static OperationResult enforce(CompiledSchema schema, StorageTransaction tx, CandidateRows rows,
                                   List<Staged> staged, int clientOperations, int cap, Appender appender) {
        for (Staged s : staged) {
            if (s.values() == null) continue;
            for (ColumnReference r : s.table().references()) {
                Object value = s.values()[s.table().columnIndex(r.column())];
                Optional<String> parentId = Scopes.render(value);
                if (parentId.isEmpty()) continue;
                Optional<StoredRow> parent = rows.get(r.parentTable(), parentId.get());
                if (parent.isPresent() && parent.get().scopes().equals(Scopes.extract(s.table(), s.values()).scopes())) {
                    continue;
                }
                return violation(s.opIndex(), "declared reference names an absent parent row (§6.11)",
                        List.of(r.column()), "missing_parent", parentReference(r.parentTable(), parentId.get()));
            }
        }

        record Visit(TableSchema table, String rowId, int origin) { }
        ArrayDeque<Visit> queue = new ArrayDeque<>();
        Set<String> visited = new HashSet<>();
        for (Staged s : staged) {
            if (s.values() == null && s.existed() && visited.add(key(s.table().name(), s.rowId()))) {
                queue.add(new Visit(s.table(), s.rowId(), s.opIndex()));
            }
        }
        int appended = 0;
        while (!queue.isEmpty()) {
            Visit parent = queue.poll();
            for (IncomingReference r : schema.referencedBy(parent.table().name())) {
                TableSchema child = schema.table(r.childTable()).orElseThrow();
                int column = child.columnIndex(r.column());
                String after = null;
                while (true) {
                    List<StoredRow> page = tx.scanRowsByReference(child.name(), r.column(), parent.rowId(), after,
                            PAGE);
                    if (!page.isEmpty() && r.onDelete() == ColumnReference.OnDelete.RESTRICT) {
                        return violation(parent.origin(),
                                "delete is blocked by a declared reference with ON DELETE RESTRICT (§6.11)", null,
                                "restricted_delete", Map.of("child", child.name()));
                    }
                    for (StoredRow row : page) {
                        if (!visited.add(key(child.name(), row.rowId()))) continue;
                        if (appended == cap) {
                            return violation(parent.origin(),
                                    "declared-reference cascade exceeded the per-commit operation cap (§6.11)", null,
                                    "cascade_limit", null);
                        }
                        int index = clientOperations + appended++;
                        OperationResult refused;
                        if (r.onDelete() == ColumnReference.OnDelete.CASCADE) {
                            refused = appender.delete(child, row, index, parent.origin());
                            queue.add(new Visit(child, row.rowId(), parent.origin()));
                        } else {
                            refused = appender.detach(child, row, column, index, parent.origin());
                        }
                        if (refused != null) return refused;
                    }
                    if (page.size() < PAGE) break;
                    after = page.get(page.size() - 1).rowId();
                }
            }
        }
        return null;
    }

    private static String key(String table, String rowId) { return table + '\u0000' + rowId; }

    /** §6.3.1: a reference value is a short, trimmed, control-free string; a row id that is not one is left out. */
    private static Map<String, String> parentReference(String parentTable, String rowId) {
        try {
            return new RejectionDetails(null, "missing_parent", null, Map.of("parent", parentTable, "row", rowId))
                    .references();
        } catch (IllegalArgumentException notAReferenceValue) {
            return Map.of("parent", parentTable);
        }
    }

    private static OperationResult violation(int opIndex, String message, List<String> fieldPaths, String reason,
                                             Map<String, String> references) {
        RejectionDetails details = new RejectionDetails(fieldPaths, reason, null, references);
        return new OperationResult.Failed(opIndex, ErrorCode.SYNC_REFERENCE_VIOLATION.wire(), message, false,
                details.toJson());
    }
}
