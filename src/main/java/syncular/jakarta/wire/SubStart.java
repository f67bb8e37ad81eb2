package syncular.jakarta.wire;

import java.util.List;
import java.util.Map;

/**
 * SUB_START (0x12): opens one subscription section (SPEC §4.4). {@code reasonCode} is "" when active;
 * {@code effectiveScopes} is empty unless active; {@code bootstrap} is true iff the section carries segments.
 */
public record SubStart(String id, Status status, String reasonCode, Map<String, List<String>> effectiveScopes,
        boolean bootstrap) implements ResponseFrame {
    public SubStart {
        Checks.nonNull(id, "SUB_START.id");
        if (status == null) throw new IllegalArgumentException("SUB_START.status is required");
        Checks.nonNull(reasonCode, "SUB_START.reasonCode");
        effectiveScopes = Checks.scopeLists(effectiveScopes, "SUB_START.effectiveScopes");
    }

    public static SubStart active(String id, Map<String, List<String>> effectiveScopes, boolean bootstrap) {
        return new SubStart(id, Status.ACTIVE, "", effectiveScopes, bootstrap);
    }

    /** SPEC §3.3: revoked, reason {@code sync.scope_revoked}, no scopes, no data. */
    public static SubStart revoked(String id) {
        return new SubStart(id, Status.REVOKED, ErrorCode.SYNC_SCOPE_REVOKED.wire(), Map.of(), false);
    }

    /** SPEC §4.6: cursor below the horizon, reason {@code sync.cursor_expired}. */
    public static SubStart reset(String id) {
        return new SubStart(id, Status.RESET, ErrorCode.SYNC_CURSOR_EXPIRED.wire(), Map.of(), false);
    }

    @Override public int frameType() { return FrameType.SUB_START.code(); }

    public enum Status {
        ACTIVE(1, "active"), REVOKED(2, "revoked"), RESET(3, "reset");

        private final int code;
        private final String jsonName;

        Status(int code, String jsonName) {
            this.code = code;
            this.jsonName = jsonName;
        }

        public int code() { return code; }

        public String jsonName() { return jsonName; }

        static Status forCode(int code) {
            return code == 1 ? ACTIVE : code == 2 ? REVOKED : code == 3 ? RESET : null;
        }
    }
}
