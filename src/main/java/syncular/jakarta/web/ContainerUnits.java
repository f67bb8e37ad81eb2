package syncular.jakarta.web;

import javax.sql.DataSource;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StagedWritesRefused;
import syncular.jakarta.storage.UnitTransactions;

/**
 * The units of work of one runtime on their container services: a push group on {@link PushGroups}, a backfill batch
 * on {@link BackfillBatches}, each on {@code storage} over {@code dataSource}; staged, and once more unstaged when the
 * database refused a staged write (a new container transaction, the first rolled back).
 */
final class ContainerUnits implements UnitTransactions {
    private final PushGroups pushGroups;
    private final BackfillBatches backfillBatches;
    private final DataSource dataSource;
    private final ServerStorage storage;

    ContainerUnits(PushGroups pushGroups, BackfillBatches backfillBatches, DataSource dataSource,
                   ServerStorage storage) {
        this.pushGroups = pushGroups;
        this.backfillBatches = backfillBatches;
        this.dataSource = dataSource;
        this.storage = storage;
    }

    @Override
    public <T> T pushGroup(String partition, ServerStorage.TransactionWork<T> work) {
        return StagedWritesRefused.stagedThenUnstaged(staged -> JtaTransactions.unwrapped(
                () -> pushGroups.apply(dataSource, storage, partition, staged, work)));
    }

    @Override
    public <T> T backfillBatch(String partition, ServerStorage.TransactionWork<T> work) {
        return StagedWritesRefused.stagedThenUnstaged(staged -> JtaTransactions.unwrapped(
                () -> backfillBatches.run(dataSource, storage, partition, staged, work)));
    }
}
