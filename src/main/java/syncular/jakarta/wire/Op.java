package syncular.jakarta.wire;

/** The {@code op} enum byte of push operations and commit changes (SPEC §6.1, §4.5). */
public enum Op {
    UPSERT(1, "upsert"), DELETE(2, "delete");

    private final int code;
    private final String jsonName;

    Op(int code, String jsonName) {
        this.code = code;
        this.jsonName = jsonName;
    }

    public int code() { return code; }

    public String jsonName() { return jsonName; }

    /** The op for a wire byte, or {@code null} when the byte is outside the enum (a decode error for the caller). */
    static Op forCode(int code) {
        return code == 1 ? UPSERT : code == 2 ? DELETE : null;
    }
}
