package syncular.jakarta.web;

import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import javax.sql.DataSource;
import syncular.jakarta.storage.ServerStorage;

/**
 * The push group as a container transaction (ARCHITECTURE request step 4, {@code sync.GroupCommit}): the commits of
 * every request of a partition that queued meanwhile, applied by one leader under one lock acquisition. Called
 * through {@link ContainerUnits}, which reruns a group unstaged when the database refused a staged write.
 */
@Stateless
public class PushGroups {
    // one group commits on its own: every commit of it with its stored result, then the answers; or nothing
    @TransactionAttribute(TransactionAttributeType.REQUIRES_NEW)
    public <T> T apply(DataSource dataSource, ServerStorage storage, String partition, boolean staged,
                       ServerStorage.TransactionWork<T> work) {
        return JtaTransactions.unitOnEnlisted(dataSource, storage, partition, staged, work);
    }
}
