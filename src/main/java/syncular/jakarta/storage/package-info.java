/**
 * The storage contract of the sync server (upstream 0.24 {@code storage.d.ts}, UPSTREAM-SERVER.md §2 and §3): the
 * commit log, the relational current-row projection, client records, push results, and the RFC 0007 checkpoint
 * lifecycle, writer fence and serve gate. JDK and {@code java.sql} only, plus {@code wire} and {@code schema}; no
 * {@code jakarta.*}, no SQL text (that lives in {@code storage.postgres}).
 *
 * <p>Transactions belong to the caller. The storage's unit of work ({@link
 * syncular.jakarta.storage.ServerStorage#runUnit}: a push group, a backfill batch) runs on the
 * {@link java.sql.Connection} the caller hands it and never commits, rolls back or toggles autocommit on it: under JTA
 * the container does that, in the {@code REQUIRES_NEW} method of the unit's own {@code @Stateless} service
 * ({@link syncular.jakarta.storage.UnitTransactions}). The storage's own maintenance units (a migration, a checkpoint
 * write, a prune) go through {@link syncular.jakarta.storage.TransactionRunner}, which a container implements with
 * one EJB {@code REQUIRES_NEW} method. Operation outcomes (a rejected push, a stale activation) are values, never
 * exceptions; only infrastructure failures and the coded refusals of
 * {@link syncular.jakarta.storage.StorageErrorCode} throw.
 */
package syncular.jakarta.storage;
