package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.storage.ClientRecord;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ErrorCode;

/** Log-epoch rotation after a backup restore (SPEC §2.1): every partition, or one, and never an unknown one. */
class LogEpochsTest {
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(TestSchemas.tasks(1), List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    private static Map<String, PartitionRegistryEntry> registry() {
        return storage.listPartitionRegistry().stream()
                .collect(Collectors.toMap(PartitionRegistryEntry::partition, Function.identity()));
    }

    @Test
    void everyPartitionGetsAFreshRequiredEpochAndLosesItsClientRecords() {
        String a = EmbeddedPostgresSupport.partition("restore-a");
        String b = EmbeddedPostgresSupport.partition("restore-b");
        storage.touchPartition(a, 1_000L, "epoch-a");
        storage.touchPartition(b, 1_000L, "epoch-b");
        storage.putClientRecord(a, new ClientRecord("c1", "actor-1", 2, 7, 1_000L, List.of()));

        List<PartitionRegistryEntry> rotated = LogEpochs.rotateAfterRestore(storage, () -> 2_000L, null);

        Map<String, PartitionRegistryEntry> now = registry();
        assertTrue(rotated.stream().map(PartitionRegistryEntry::partition).toList().containsAll(List.of(a, b)));
        assertNotEquals("epoch-a", now.get(a).logEpoch());
        assertNotEquals("epoch-b", now.get(b).logEpoch());
        assertTrue(now.get(a).epochRequired() && now.get(b).epochRequired(), "the new epochs are required");
        assertNotEquals(now.get(a).logEpoch(), now.get(b).logEpoch(), "each partition its own random epoch");
        assertTrue(storage.getClientRecord(a, "c1").isEmpty(), "the cursors of the old log are gone");
    }

    @Test
    void oneNamedPartitionIsRotatedAloneAndAnUnknownOneIsNotFound() {
        String a = EmbeddedPostgresSupport.partition("restore-one");
        String other = EmbeddedPostgresSupport.partition("restore-other");
        storage.touchPartition(a, 1_000L, "epoch-one");
        storage.touchPartition(other, 1_000L, "epoch-other");

        List<PartitionRegistryEntry> rotated = LogEpochs.rotateAfterRestore(storage, () -> 2_000L, a);

        assertEquals(List.of(a), rotated.stream().map(PartitionRegistryEntry::partition).toList());
        assertNotEquals("epoch-one", registry().get(a).logEpoch());
        assertEquals("epoch-other", registry().get(other).logEpoch(), "the other partition keeps its epoch");
        SyncException e = assertThrows(SyncException.class,
                () -> LogEpochs.rotateAfterRestore(storage, () -> 2_000L, "no-such-partition"));
        assertEquals(ErrorCode.SYNC_NOT_FOUND, e.code());
        assertTrue(registry().get("no-such-partition") == null, "nothing was created for it");
    }
}
