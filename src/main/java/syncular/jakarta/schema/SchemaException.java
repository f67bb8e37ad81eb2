package syncular.jakarta.schema;

/** An invalid or unreadable schema file; the message names the table and column at fault, never a value. */
public final class SchemaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SchemaException(String message) { super(message); }

    public SchemaException(String message, Throwable cause) { super(message, cause); }
}
