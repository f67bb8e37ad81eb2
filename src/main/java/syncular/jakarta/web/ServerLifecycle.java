package syncular.jakarta.web;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.annotation.sql.DataSourceDefinition;
import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.EJB;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.Timeout;
import jakarta.ejb.Timer;
import jakarta.ejb.TimerConfig;
import jakarta.ejb.TimerService;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.ConfigProvider;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.schema.SchemaException;
import syncular.jakarta.storage.StorageException;

/**
 * Start-up, split the way operators need it: what only a redeploy can fix (a malformed or missing configuration
 * value, an invalid or missing schema file) FAILS the deployment with one line naming the key or the table and
 * column; what fixes itself (the database unreachable or refusing the credentials) leaves the WAR deployed with
 * readiness DOWN, retried with capped exponential backoff by a non-persistent EJB timer until it comes UP.
 *
 * <p>The app-defined DataSource lives here because {@code @DataSourceDefinition} belongs on a component class.
 * Payara resolves its {@code ${MPCONFIG=…}} values; WildFly uses the same-named definition in jboss-web.xml.
 */
@DataSourceDefinition(
        name = SyncularConfig.APP_DATASOURCE,
        className = "org.postgresql.ds.PGSimpleDataSource",
        url = "${MPCONFIG=syncular.db.url}",
        user = "${MPCONFIG=syncular.db.user}",
        password = "${MPCONFIG=syncular.db.password}",
        initialPoolSize = 0,
        minPoolSize = 0,
        maxPoolSize = 32,
        properties = {
            // a dead database must not hold a request or the readiness probe for the driver's default timeout
            "connectTimeout=5", "ApplicationName=syncular",
            // every statement runs on its cached generic plan: PostgreSQL otherwise re-plans some statements per
            // execution (custom plans), which was a quarter of its CPU under the mixed soak (docs/benchmarks.md);
            // the generic plans of the request path are checked by PostgresExplainTest and PostgresPlanCacheTest
            "options=-c plan_cache_mode=force_generic_plan",
            // Payara: validate a connection before handing it out, at most once per 10 s (issue 14: validating
            // every checkout was a SELECT 1 round trip each), and on a failed validation or a connection error drop
            // every pooled connection (a restarted or failed-over database killed them all); without this the pool
            // kept handing out terminated connections. A connection that died within the interval fails its first
            // statement; storage retries that on a fresh connection (sessions) or retries the push group.
            // WildFly ignores these (logged once) and is covered in jboss-web.xml.
            "fish.payara.is-connection-validation-required=true",
            "fish.payara.validate-atmost-once-period-in-seconds=10",
            "fish.payara.connection-validation-method=custom-validation",
            "fish.payara.validation-classname=org.glassfish.api.jdbc.validation.PostgresConnectionValidation",
            "fish.payara.fail-all-connections=true",
            // Payara: hand out any free connection. Matching one to the caller's credentials (the default for an
            // app-defined pool) reads the pool's security subject under a monitor on every checkout, and every
            // connection of this pool has the same credentials.
            "fish.payara.match-connections=false"})
@Singleton
@Startup
@ConcurrencyManagement(ConcurrencyManagementType.BEAN) // state lives in Readiness; ticks never overlap a deploy
public class ServerLifecycle {
    private static final System.Logger LOG = System.getLogger(ServerLifecycle.class.getName());
    static final String CHECK_DATABASE = "database";
    static final String CHECK_SCHEMA = "schema";

    static final String CHECK_STORAGE = "storage";

    @Resource
    TimerService timers;
    @Inject
    Readiness readiness;
    @Inject
    SyncRuntime runtime;
    @Inject
    Telemetry telemetry;
    @EJB
    JtaTransactions transactions;

    private volatile SyncularConfig config;
    private volatile CompiledSchema schema;
    private volatile long nextDelayMs = 500;

    @PostConstruct
    void start() {
        SyncularConfig cfg;
        CompiledSchema compiled;
        try {
            cfg = SyncularConfig.from(ConfigProvider.getConfig());
            compiled = SchemaCompiler.load(cfg.schema(), ServerLifecycle.class.getClassLoader());
        } catch (ConfigException | SchemaException e) {
            // One line that names the key or the table/column; the container turns it into a failed deployment.
            LOG.log(Level.ERROR, "Syncular start-up refused: " + e.getMessage());
            throw e;
        }
        this.config = cfg;
        this.schema = compiled;
        readiness.up(CHECK_SCHEMA, "loaded", "schema version " + compiled.version() + ", " + compiled.tables().size()
                + " table(s) from " + cfg.schema());
        readiness.down(CHECK_DATABASE, "not checked yet", "not checked yet");
        readiness.down(CHECK_STORAGE, "waiting for the database", "waiting for the database");
        if (cfg.conformanceHost()) {
            LOG.log(Level.WARNING, "Syncular is in CONFORMANCE-HOST mode (syncular.conformance-host=true): "
                    + "test authentication and the /__conformance control plane are enabled. Never in production.");
        }
        LOG.log(Level.INFO, "Syncular starting: schema version {0} ({1} tables), datasource {2}",
                compiled.version(), compiled.tables().size(), cfg.dataSourceJndiName());
        // The first database check runs on the timer too, so deployment never waits on a slow network.
        timers.createSingleActionTimer(1, new TimerConfig(null, false));
    }

    /**
     * The SQLite driver (§5.3 images) registers itself with {@code DriverManager} when its classes load; this WAR's
     * registration leaves with it, so a redeploy keeps no driver of the old class loader alive. (PostgreSQL's stays:
     * the container's pool of the app-defined DataSource may still be closing its connections.)
     */
    @jakarta.annotation.PreDestroy
    void stop() {
        ClassLoader ours = ServerLifecycle.class.getClassLoader();
        for (java.sql.Driver d : java.util.Collections.list(java.sql.DriverManager.getDrivers())) {
            if (d.getClass().getName().startsWith("org.sqlite.") && d.getClass().getClassLoader() == ours) {
                try {
                    java.sql.DriverManager.deregisterDriver(d);
                } catch (java.sql.SQLException e) {
                    LOG.log(Level.WARNING, "the SQLite driver could not be deregistered: " + e.getMessage());
                }
            }
        }
    }

    public SyncularConfig config() { return config; }

    public CompiledSchema schema() { return schema; }

    @Timeout
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED) // a probe, not a unit of work
    void checkDatabase(Timer timer) {
        try {
            DataSource ds = Database.lookup(config);
            try (Connection c = ds.getConnection()) {
                if (!c.isValid(5)) throw new SQLException("connection is not valid");
                String product = c.getMetaData().getDatabaseProductName() + " "
                        + c.getMetaData().getDatabaseProductVersion();
                readiness.up(CHECK_DATABASE, "reachable", product);
                LOG.log(Level.INFO, "Syncular database reachable ({0})", product);
                if (!c.getMetaData().getDatabaseProductName().equals("PostgreSQL")) {
                    readiness.down(CHECK_STORAGE, "unsupported database",
                            "the configured DataSource is not PostgreSQL: " + product);
                    LOG.log(Level.ERROR, "Syncular storage needs PostgreSQL; the configured DataSource is {0}", product);
                    return; // no retry: only a configuration change fixes this
                }
            }
            startStorage(ds);
            nextDelayMs = 500;
        } catch (StorageException e) {
            // The database answers but refuses this schema (newer stored version, layout mismatch, ...): only an
            // operator or a peer's migration fixes that; keep reporting it and keep checking.
            readiness.down(CHECK_STORAGE, "schema refused",
                    e.code().code() + (e.details().isEmpty() ? "" : " " + e.details()));
            LOG.log(Level.ERROR, "Syncular storage refused schema version {0}: {1} {2}", schema.version(),
                    e.code().code(), e.details());
            retryLater();
        } catch (SQLException | RuntimeException e) {
            String why = describe(e);
            readiness.down(CHECK_DATABASE, "unreachable", "unreachable: " + why);
            LOG.log(Level.WARNING, "Syncular database unreachable ({0}); readiness DOWN, retrying", why);
            retryLater();
        }
    }

    private void retryLater() {
        long delay = nextDelayMs;
        nextDelayMs = Math.min(delay * 2, config.readinessRetryMaxMs());
        timers.createSingleActionTimer(delay, new TimerConfig(null, false));
    }

    /** Installs or migrates the schema (memoized by storage), then opens the sync endpoint. */
    private void startStorage(DataSource ds) {
        if (runtime.parts().isPresent()) return;
        readiness.down(CHECK_STORAGE, "installing", "installing schema version " + schema.version());
        DataSource timed = new TimedDataSource(ds, telemetry.meters());
        runtime.start(config, schema, timed, JtaTransactions.runner(transactions, timed));
        readiness.up(CHECK_STORAGE, "installed", "schema version " + schema.version() + " installed");
        LOG.log(Level.INFO, "Syncular ready: schema version {0} installed", schema.version());
    }

    /** The innermost cause's class and message: "connection refused", "password authentication failed", … */
    private static String describe(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) t = t.getCause();
        String msg = t.getMessage() == null ? "" : t.getMessage().replaceAll("\\s+", " ");
        return t.getClass().getSimpleName() + (msg.isEmpty() ? "" : ": " + msg);
    }
}
