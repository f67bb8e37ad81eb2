package syncular.jakarta.host;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import syncular.jakarta.wire.RejectionDetails;

/**
 * A deliberate host rejection of a push operation (SPEC §6.7) or of a whole commit (§6.8). The code is the host's
 * and reaches the client unchanged in the operation's {@code error} record; {@code details} travel as
 * PUSH_RESULT_DETAILS (§6.3.1) and are stored with the outcome so a replay repeats them.
 *
 * <p>§6.7: a host code beginning with a protocol family prefix is a server bug, refused loudly HERE, at
 * construction, never silently at push time. Details are validated by {@link RejectionDetails} at construction too.
 */
public final class ValidationRejection extends RuntimeException {
    /** §6.7: the protocol's own error families (§10.2, §10.3). */
    public static final List<String> RESERVED_PREFIXES = List.of("sync.", "blob.", "operation.", "presence.", "client.");

    private final String code;
    private final RejectionDetails details;
    private final Integer opIndex;

    /** A row validator's rejection (§6.7): the operation being validated is the one rejected. */
    public ValidationRejection(String code, String message, RejectionDetails details) {
        this(null, code, message, details);
    }

    public ValidationRejection(String code, String message) { this(null, code, message, null); }

    /** A commit validator's rejection (§6.8): names the operation it blames, an index of the pushed commit. */
    public static ValidationRejection ofOperation(int opIndex, String code, String message, RejectionDetails details) {
        if (opIndex < 0) throw new IllegalArgumentException("opIndex must not be negative");
        return new ValidationRejection(opIndex, code, message, details);
    }

    private ValidationRejection(Integer opIndex, String code, String message, RejectionDetails details) {
        super(Objects.requireNonNull(message, "message"), null, false, false);
        checkCode(code);
        this.code = code;
        this.details = details;
        this.opIndex = opIndex;
    }

    /** Refuses an empty code or one in a reserved family (§6.7). */
    public static void checkCode(String code) {
        Objects.requireNonNull(code, "code");
        if (code.isBlank()) throw new IllegalArgumentException("a host validation code must not be blank");
        for (String prefix : RESERVED_PREFIXES) {
            if (code.startsWith(prefix)) {
                throw new IllegalArgumentException("host validation code '" + code
                        + "' uses the reserved protocol prefix '" + prefix + "' (SPEC §6.7)");
            }
        }
    }

    public String code() { return code; }

    public Optional<RejectionDetails> details() { return Optional.ofNullable(details); }

    /** The operation a commit validator blames; empty for a row validator's rejection. */
    public Optional<Integer> opIndex() { return Optional.ofNullable(opIndex); }
}
