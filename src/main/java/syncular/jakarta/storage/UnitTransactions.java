package syncular.jakarta.storage;

/**
 * Where a unit of work that commits on its own gets its transaction (ARCHITECTURE "Transactions, locks, time"): one
 * push group (every commit of the group, or none), one backfill batch or activation (the projection commit, the
 * checkpoint advance and the pass position together). In the application server each is a {@code @Stateless}
 * service whose {@code REQUIRES_NEW} method is the unit ({@code web.PushGroups}, {@code web.BackfillBatches}) and
 * runs {@link ServerStorage#runUnit} on the container's transaction; outside it ({@link #of}) the storage's own
 * runner does.
 */
public interface UnitTransactions {
    /** {@code work} as one push group of {@code partition}, committed when it returns. */
    <T> T pushGroup(String partition, ServerStorage.TransactionWork<T> work);

    /** {@code work} as one backfill batch (or activation) of {@code partition}, committed when it returns. */
    <T> T backfillBatch(String partition, ServerStorage.TransactionWork<T> work);

    /** Both units through {@code storage}'s own runner ({@link ServerStorage#inTransaction}): plain JDBC, tests. */
    static UnitTransactions of(ServerStorage storage) {
        return new UnitTransactions() {
            @Override
            public <T> T pushGroup(String partition, ServerStorage.TransactionWork<T> work) {
                return storage.inTransaction(partition, work);
            }

            @Override
            public <T> T backfillBatch(String partition, ServerStorage.TransactionWork<T> work) {
                return storage.inTransaction(partition, work);
            }
        };
    }
}
