package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import syncular.jakarta.wire.ErrorCode;

/** Issue 13: one partition's crowd never takes the turns of another, and nobody waits unbounded. */
class PartitionAdmissionTest {
    @Test
    void beyondConcurrencyAndQueueARequestIsRefusedAtOnceAsRateLimited() throws Exception {
        PartitionAdmission admission = new PartitionAdmission(new PartitionAdmission.Settings(2, 1, 60_000));
        PartitionAdmission.Turn a = admission.enter("p");
        PartitionAdmission.Turn b = admission.enter("p");
        // two more arrive: whichever comes second finds the one queue place taken and is refused at once
        CompletableFuture<PartitionAdmission.Turn> first = CompletableFuture.supplyAsync(() -> admission.enter("p"));
        CompletableFuture<PartitionAdmission.Turn> second = CompletableFuture.supplyAsync(() -> admission.enter("p"));
        CompletableFuture.anyOf(first, second).handle((r, e) -> null).get(30, TimeUnit.SECONDS);
        CompletableFuture<PartitionAdmission.Turn> refused = first.isDone() ? first : second;
        CompletableFuture<PartitionAdmission.Turn> queued = refused == first ? second : first;
        ExecutionException failure = assertThrows(ExecutionException.class, () -> refused.get());
        SyncException e = (SyncException) failure.getCause();
        assertEquals(ErrorCode.SYNC_RATE_LIMITED, e.code());
        assertTrue(e.code().retryable());
        assertFalse(queued.isDone(), "the queued request still waits for a turn");

        a.close();
        PartitionAdmission.Turn c = queued.get(30, TimeUnit.SECONDS);   // it got the turn a gave back
        b.close();
        c.close();
        admission.enter("p").close();
    }

    @Test
    void aFullPartitionLeavesAnotherPartitionItsTurns() {
        PartitionAdmission admission = new PartitionAdmission(new PartitionAdmission.Settings(1, 0, 0));
        PartitionAdmission.Turn busy = admission.enter("busy");
        assertThrows(SyncException.class, () -> admission.enter("busy"));
        try (PartitionAdmission.Turn other = admission.enter("other")) {
            assertTrue(other != null);
        }
        busy.close();
    }

    @Test
    void aWaitThatGetsNoTurnEndsRateLimitedAndLeavesNothingBehind() {
        PartitionAdmission admission = new PartitionAdmission(new PartitionAdmission.Settings(1, 5, 20));
        PartitionAdmission.Turn held = admission.enter("p");
        SyncException e = assertThrows(SyncException.class, () -> admission.enter("p"));
        assertEquals(ErrorCode.SYNC_RATE_LIMITED, e.code());
        held.close();
        held.close();   // closing twice gives back one turn, not two
        PartitionAdmission.Turn again = admission.enter("p");
        assertThrows(SyncException.class, () -> admission.enter("p"), "one turn only, after the double close");
        again.close();
    }
}
