/**
 * RFC 0007 safe schema evolution under live traffic (issue 7, UPSTREAM-SERVER §3): which checkpoints this process
 * declares ({@link syncular.jakarta.migration.Declarations}), the backfill runner that fills a declared projection in
 * one transaction per batch and activates it ({@link syncular.jakarta.migration.BackfillRunner}), the configurable
 * column-copy projection ({@link syncular.jakarta.migration.ColumnCopyProjection}) and the operator report
 * ({@link syncular.jakarta.migration.CheckpointReport}). No Jakarta imports: the EJB timer and the admin resource
 * in {@code web} drive these.
 */
package syncular.jakarta.migration;
