package syncular.jakarta.web;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManagerFactory;
import javax.sql.DataSource;
import syncular.jakarta.console.ConsolePersistence;
import syncular.jakarta.console.OperatorViews;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/**
 * The console's views over the running storage's DataSource, their JPA unit built on first use
 * ({@link ConsolePersistence}) and rebuilt only if the storage moves to another DataSource; closed with the
 * application.
 */
@ApplicationScoped
public class ConsoleViews {
    @Inject
    SyncRuntime runtime;

    private DataSource over;
    private EntityManagerFactory emf;
    private OperatorViews views;

    /** The views, or 503 {@code sync.schema_not_ready} while the server is not running. */
    public synchronized OperatorViews views() {
        DataSource ds = runtime.parts().map(SyncRuntime.Parts::dataSource).orElseThrow(() -> new SyncException(
                ErrorCode.SYNC_SCHEMA_NOT_READY, "the server is starting or its database is unreachable", "{}"));
        if (views == null || over != ds) {
            close();
            emf = ConsolePersistence.open(ds);
            over = ds;
            views = new OperatorViews(emf);
        }
        return views;
    }

    @PreDestroy
    synchronized void close() {
        if (emf != null && emf.isOpen()) emf.close();
        emf = null;
        views = null;
    }
}
