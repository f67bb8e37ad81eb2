package syncular.jakarta.storage;

/** The operation of one change (SPEC §2.2), with the code the change log stores. */
public enum ChangeOp {
    UPSERT(1), DELETE(2);

    private final int code;

    ChangeOp(int code) { this.code = code; }

    public int code() { return code; }

    public static ChangeOp forCode(int code) {
        return switch (code) {
            case 1 -> UPSERT;
            case 2 -> DELETE;
            default -> throw new IllegalArgumentException("unknown change op code " + code);
        };
    }
}
