package syncular.jakarta.web;

/** A malformed or missing configuration value; the message is one line that names the key. Fails deployment. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) { super(message); }
}
