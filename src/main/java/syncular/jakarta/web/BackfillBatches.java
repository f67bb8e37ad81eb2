package syncular.jakarta.web;

import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import javax.sql.DataSource;
import syncular.jakarta.storage.ServerStorage;

/**
 * One RFC 0007 backfill batch, or an activation, as a container transaction ({@code migration.BackfillRunner}): the
 * batch's claim, projection commit, checkpoint advance and pass position, all or nothing, so a node killed mid-batch
 * leaves nothing a retry would write twice. Called through {@link ContainerUnits} from {@link BackfillWorker}'s drain,
 * which runs outside any transaction.
 */
@Stateless
public class BackfillBatches {
    // each batch commits on its own: pushes interleave between batches, never inside one
    @TransactionAttribute(TransactionAttributeType.REQUIRES_NEW)
    public <T> T run(DataSource dataSource, ServerStorage storage, String partition, boolean staged,
                     ServerStorage.TransactionWork<T> work) {
        return JtaTransactions.unitOnEnlisted(dataSource, storage, partition, staged, work);
    }
}
