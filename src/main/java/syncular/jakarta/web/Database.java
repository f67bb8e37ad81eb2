package syncular.jakarta.web;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * Finds the DataSource behind all storage: the configured container pool ({@code syncular.datasource}) or the
 * WAR's own {@code java:app/jdbc/syncular} (defined on {@link ServerLifecycle}).
 */
public final class Database {
    private Database() { }

    /** Looks up the configured DataSource (JNDI names are resolved from within the application's components). */
    public static DataSource lookup(SyncularConfig config) {
        String name = config.dataSourceJndiName();
        try {
            return (DataSource) new InitialContext().lookup(name);
        } catch (NamingException e) {
            throw new ConfigException("syncular.datasource: no DataSource is bound at " + name);
        }
    }
}
