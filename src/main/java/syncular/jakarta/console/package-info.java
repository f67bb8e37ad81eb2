/**
 * The operator console's read-only views (issue 20): JPA entities mapped onto the server's own tables, read through
 * the container's provider (EclipseLink on Payara, Hibernate ORM on WildFly; portable JPA only) by
 * {@link syncular.jakarta.console.OperatorViews}. Nothing here writes: every write, operator actions included, stays
 * on the JDBC storage path. The entities mirror {@code storage.postgres.PostgresDdl}; a column renamed there must
 * be renamed here.
 */
package syncular.jakarta.console;
