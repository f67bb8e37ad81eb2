package syncular.jakarta.console;

import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.SharedCacheMode;
import jakarta.persistence.ValidationMode;
import jakarta.persistence.spi.ClassTransformer;
import jakarta.persistence.spi.PersistenceProvider;
import jakarta.persistence.spi.PersistenceProviderResolverHolder;
import jakarta.persistence.spi.PersistenceUnitInfo;
import jakarta.persistence.spi.PersistenceUnitTransactionType;
import java.net.URL;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import javax.sql.DataSource;

/**
 * The console's persistence unit, built by the application through the portable JPA SPI
 * ({@link PersistenceProvider#createContainerEntityManagerFactory}) instead of a {@code persistence.xml} the container
 * deploys. Three reasons: the unit reads through the storage's own DataSource (the one {@code syncular.datasource}
 * names, a JNDI name a {@code persistence.xml} could not follow); it is built on the console's first use, so the WAR
 * deploys while the database is down (Payara opens a container-managed unit's connection at deployment); and it is
 * RESOURCE_LOCAL and never joins a JTA transaction, which suits views that write nothing. The provider is the
 * container's own: EclipseLink on Payara, Hibernate ORM on WildFly (jboss-deployment-structure.xml imports its
 * module). Portable JPA only; the two providers' properties below fix the PostgreSQL dialect and turn off what a
 * read-only view does not need (weaving, schema generation, caches).
 */
public final class ConsolePersistence {
    static final String UNIT = "syncular-console";
    static final List<Class<?>> ENTITIES = List.of(PartitionEntry.class, PartitionRegistration.class,
            ClientEntry.class, CommitEntry.class, ChangeEntry.class, ChangeScopeEntry.class, RowScopeEntry.class,
            BlobRefEntry.class, AuditEntry.class);

    private ConsolePersistence() { }

    /** A new factory over {@code dataSource}; the caller closes it. Fails with a clear message without a provider. */
    public static EntityManagerFactory open(DataSource dataSource) {
        List<PersistenceProvider> providers = PersistenceProviderResolverHolder.getPersistenceProviderResolver()
                .getPersistenceProviders();
        if (providers.isEmpty()) {
            throw new IllegalStateException("no JPA provider is visible to the WAR: the operator console needs the "
                    + "application server's (EclipseLink on Payara, Hibernate ORM on WildFly)");
        }
        Properties properties = new Properties();
        properties.putAll(Map.of(
                "jakarta.persistence.schema-generation.database.action", "none",
                // Hibernate ORM
                "hibernate.dialect", "org.hibernate.dialect.PostgreSQLDialect",
                "hibernate.boot.allow_jdbc_metadata_access", "false",
                // EclipseLink
                "eclipselink.target-database", "PostgreSQL",
                "eclipselink.weaving", "false",
                "eclipselink.logging.level", "WARNING",
                "eclipselink.cache.shared.default", "false"));
        return providers.get(0).createContainerEntityManagerFactory(new Unit(dataSource, properties), Map.of());
    }

    /** The unit's description, as a {@code persistence.xml} would give it. */
    private record Unit(DataSource dataSource, Properties properties) implements PersistenceUnitInfo {
        @Override public String getPersistenceUnitName() { return UNIT; }

        @Override public String getPersistenceProviderClassName() { return null; }

        @Override public PersistenceUnitTransactionType getTransactionType() {
            return PersistenceUnitTransactionType.RESOURCE_LOCAL;
        }

        @Override public DataSource getJtaDataSource() { return null; }

        @Override public DataSource getNonJtaDataSource() { return dataSource; }

        @Override public List<String> getMappingFileNames() { return List.of(); }

        @Override public List<URL> getJarFileUrls() { return List.of(); }

        /**
         * The class-path root the entities are under, as a directory URL ending in {@code /} (or a jar's
         * {@code jar:…!/}): a providers treats a root without the slash as a jar file.
         */
        @Override public URL getPersistenceUnitRootUrl() {
            String self = ConsolePersistence.class.getName().replace('.', '/') + ".class";
            String url = ConsolePersistence.class.getClassLoader().getResource(self).toExternalForm();
            try {
                return new URL(url.substring(0, url.length() - self.length()));
            } catch (java.net.MalformedURLException e) {
                throw new IllegalStateException("the console's class-path root is not a URL: " + url, e);
            }
        }

        @Override public List<String> getManagedClassNames() {
            return ENTITIES.stream().map(Class::getName).toList();
        }

        @Override public boolean excludeUnlistedClasses() { return true; }

        @Override public SharedCacheMode getSharedCacheMode() { return SharedCacheMode.NONE; }

        @Override public ValidationMode getValidationMode() { return ValidationMode.NONE; }

        @Override public Properties getProperties() { return properties; }

        @Override public String getPersistenceXMLSchemaVersion() { return "3.0"; }

        @Override public ClassLoader getClassLoader() { return ConsolePersistence.class.getClassLoader(); }

        @Override public void addTransformer(ClassTransformer transformer) {
            // no weaving or enhancement: the entities are read as they are
        }

        @Override public ClassLoader getNewTempClassLoader() { return getClassLoader(); }
    }
}
