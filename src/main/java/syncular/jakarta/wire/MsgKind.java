package syncular.jakarta.wire;

/** The envelope's {@code msgKind} byte (SPEC §1.2). */
public enum MsgKind {
    REQUEST(1, "request"), RESPONSE(2, "response");

    private final int code;
    private final String jsonName;

    MsgKind(int code, String jsonName) {
        this.code = code;
        this.jsonName = jsonName;
    }

    public int code() { return code; }

    /** The §11 rendering name. */
    public String jsonName() { return jsonName; }
}
