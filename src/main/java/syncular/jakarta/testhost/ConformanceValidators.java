package syncular.jakarta.testhost;

import jakarta.enterprise.context.ApplicationScoped;
import java.math.BigDecimal;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import syncular.jakarta.host.CommitValidator;
import syncular.jakarta.host.RowValidator;
import syncular.jakarta.host.ValidatedOperation;
import syncular.jakarta.host.ValidationContext;
import syncular.jakarta.host.ValidationRejection;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.wire.RejectionDetails;

/**
 * The conformance host's declarative §6.7/§6.8 rules (upstream conformance driver {@code ValidatorInstallSpec},
 * {@code CommitValidatorInstallSpec}), installed as REAL validators: this bean is discovered like any deployer's
 * {@link RowValidator}/{@link CommitValidator} and runs inside the push transaction. It holds no rule until the
 * control plane installs one (only reachable with {@code syncular.conformance-host=true}), so elsewhere it handles
 * no table and is never active. Thread-safe: each rule set is replaced whole.
 */
@ApplicationScoped
public class ConformanceValidators implements RowValidator, CommitValidator {
    /** One installed §6.7 rule; values are already converted to the column's type. */
    sealed interface Rule permits MaxLength, ImmutableWhen { }

    record MaxLength(String column, long max, String code) implements Rule { }

    record ImmutableWhen(String column, String guardColumn, Object guardValue, String code) implements Rule { }

    /** The §6.8 aggregate rule. */
    record RequireSiblingWhen(String table, String column, Object equals, String siblingRowIdSuffix, String code) { }

    private volatile Map<String, Rule> rules = Map.of();
    private volatile RequireSiblingWhen commitRule;

    void install(Map<String, Rule> byTable) { rules = Map.copyOf(byTable); }

    void installCommit(RequireSiblingWhen rule) { commitRule = rule; }

    /** Reset: no validators, no commit validator. */
    void clear() {
        rules = Map.of();
        commitRule = null;
    }

    @Override
    public boolean handles(String table) { return rules.containsKey(table); }

    @Override
    public void validate(ValidatedOperation op, ValidationContext context) {
        Rule rule = rules.get(op.table());
        if (rule == null || op.row() == null) return; // deletes carry no row
        if (rule instanceof MaxLength m) {
            if (op.row().get(m.column()) instanceof String s && s.length() > m.max()) {
                throw new ValidationRejection(m.code(), m.column() + " exceeds " + m.max() + " characters (§6.7)",
                        new RejectionDetails(List.of(m.column()), "max_length_exceeded", "edit_fields", null));
            }
        } else if (rule instanceof ImmutableWhen w) {
            if (op.stored() == null) return; // an insert
            if (!same(op.stored().get(w.guardColumn()), w.guardValue())) return;
            if (!same(op.row().get(w.column()), op.stored().get(w.column()))) {
                throw new ValidationRejection(w.code(), w.column() + " is immutable while " + w.guardColumn()
                        + " holds the guard value (§6.7)",
                        new RejectionDetails(List.of(w.column()), "immutable_state", "keep_server", null));
            }
        }
    }

    @Override
    public boolean active() { return commitRule != null; }

    @Override
    public void validate(Commit commit, ValidationContext context) {
        RequireSiblingWhen rule = commitRule;
        if (rule == null) return;
        Optional<ValidatedOperation> trigger = commit.operations().stream()
                .filter(o -> o.table().equals(rule.table()) && o.row() != null
                        && same(o.row().get(rule.column()), rule.equals()))
                .findFirst();
        if (trigger.isEmpty()) return;
        String sibling = trigger.get().rowId() + rule.siblingRowIdSuffix();
        boolean present = commit.operations().stream()
                .anyMatch(o -> o.table().equals(rule.table()) && o.rowId().equals(sibling));
        if (!present) {
            throw ValidationRejection.ofOperation(trigger.get().opIndex(), rule.code(),
                    "the aggregate requires a sibling operation in the same commit (§6.8)",
                    new RejectionDetails(List.of(rule.column()), "missing_sibling_operation", "repair_aggregate",
                            null));
        }
    }

    static boolean same(Object a, Object b) { return Objects.deepEquals(a, b); }

    /**
     * A driver-form JSON value as the row codec would hold it in {@code column} (issue #6: "compare by value after
     * converting the JSON value to the column's type"); an impossible conversion is the caller's error.
     */
    static Object columnValue(TableSchema table, String columnName, Object json) {
        ColumnSchema column = table.column(columnName).orElseThrow(() -> new IllegalArgumentException(
                "table " + table.name() + " has no column " + columnName));
        if (json == null) return null;
        switch (column.type()) {
            case INTEGER:
                if (json instanceof BigDecimal d) return d.longValueExact();
                break;
            case FLOAT:
                if (json instanceof BigDecimal d) return d.doubleValue();
                break;
            case BOOLEAN:
                if (json instanceof Boolean b) return b;
                break;
            case STRING, JSON, BLOB_REF:
                if (json instanceof String s) return s;
                break;
            case BYTES, CRDT:
                if (json instanceof Map<?, ?> m && m.size() == 1 && m.get("$bytes") instanceof String hex) {
                    return HexFormat.of().parseHex(hex);
                }
                break;
            default:
                break;
        }
        throw new IllegalArgumentException("the value does not fit column " + columnName + " of type "
                + column.type());
    }
}
