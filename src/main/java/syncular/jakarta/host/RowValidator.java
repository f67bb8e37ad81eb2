package syncular.jakarta.host;

/**
 * A per-table write validator (SPEC §6.7): a business rule on one operation's row. Deploy it as a CDI bean; every
 * bean of this type is used. It runs inside the push transaction after the row-codec decode and the §3.4 scope
 * authorization (including the scope-column strip on update), immediately before the row's write; a delete of an
 * absent row runs no validator.
 *
 * <p>Accept by returning. Reject deliberately by throwing {@link ValidationRejection}: the commit is rejected with
 * the host code (and its details). Any other throw rejects with {@code sync.constraint_violation}. A validator must
 * not mutate anything: the server writes the row it validated.
 */
public interface RowValidator {
    /** Whether this validator has a rule for {@code table}; false costs the push nothing more. */
    boolean handles(String table);

    void validate(ValidatedOperation operation, ValidationContext context);
}
