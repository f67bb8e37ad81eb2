package syncular.jakarta.wire;

import java.util.Optional;

/** The eight column type tags of the row codec and SSG2 column tables (SPEC §2.4). */
public enum TypeTag {
    STRING(1, "string"), INTEGER(2, "integer"), FLOAT(3, "float"), BOOLEAN(4, "boolean"),
    JSON(5, "json"), BYTES(6, "bytes"), BLOB_REF(7, "blob_ref"), CRDT(8, "crdt");

    private final int code;
    private final String schemaName;

    TypeTag(int code, String schemaName) {
        this.code = code;
        this.schemaName = schemaName;
    }

    /** The tag byte on the wire. */
    public int code() { return code; }

    /** The type's name in a schema file and in §11 JSON renderings. */
    public String schemaName() { return schemaName; }

    public static Optional<TypeTag> forCode(int code) {
        for (TypeTag t : values()) if (t.code == code) return Optional.of(t);
        return Optional.empty();
    }

    public static Optional<TypeTag> forSchemaName(String name) {
        for (TypeTag t : values()) if (t.schemaName.equals(name)) return Optional.of(t);
        return Optional.empty();
    }
}
