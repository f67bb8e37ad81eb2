/**
 * The PostgreSQL implementation of the storage contract: plain JDBC over a {@link javax.sql.DataSource}, no ORM.
 * ALL SQL of the server lives in this package (ARCHITECTURE "Layers"); the DDL is the seeds' {@code POSTGRES_DDL}
 * (seeds/002, 0.24 hunks of seeds/003) plus the relational projection tables.
 *
 * <p>Lock order (seeds/003, ARCHITECTURE "Transactions, locks, time"): a migration takes
 * {@code LOCK TABLE sync_partitions IN EXCLUSIVE MODE} as its first statement and nothing before it; a push and a
 * checkpoint activation take the partition row ({@code INSERT … ON CONFLICT DO NOTHING}, then
 * {@code SELECT … FOR UPDATE}); declaring a checkpoint takes neither. Advisory locks are transaction-scoped only.
 * Every transaction sets READ COMMITTED as its first statement rather than inheriting a pool's default.
 */
package syncular.jakarta.storage.postgres;
