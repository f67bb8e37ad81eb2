package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import syncular.jakarta.wire.DecodeException;
import syncular.jakarta.wire.ErrorCode;

/** Each branch of the one rule both transports report a failed request by in its {@code request.handled} event. */
class RequestOutcomeTest {
    @Test
    void anAnsweredRequestIsOkWithNoErrorCode() {
        assertEquals(new RequestOutcome("ok", null), RequestOutcome.OK);
    }

    @Test
    void aRefusalIsRejectedWithItsOwnCode() {
        assertEquals(new RequestOutcome("rejected", "sync.invalid_client_id"), RequestOutcome.of(
                new SyncException(ErrorCode.SYNC_INVALID_CLIENT_ID, "socket round clientId must match")));
        assertEquals(new RequestOutcome("rejected", "blob.too_large"), RequestOutcome.of(
                new SyncException(ErrorCode.BLOB_TOO_LARGE, "over the cap", "{}")));
    }

    /**
     * A refusal a container wrapped (EJBException around what the bean threw) is answered with its own code, so it is
     * reported with it too: it used to count as an internal error while the client was told the real code.
     */
    @Test
    void aWrappedRefusalIsRejectedWithItsOwnCode() {
        SyncException gate = new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY, "the projection is not ready");
        RuntimeException wrapped = new RuntimeException("transaction rolled back", new IllegalStateException(gate));
        assertEquals(new RequestOutcome("rejected", "sync.schema_not_ready"), RequestOutcome.of(wrapped));
        assertSame(gate, SyncException.in(wrapped));
        assertNull(SyncException.in(new IllegalStateException("a bug", new IOException("no refusal in here"))));
    }

    @Test
    void aMalformedRequestIsRejectedWithTheDecodersCode() {
        assertEquals(new RequestOutcome("rejected", "sync.invalid_request"), RequestOutcome.of(
                new DecodeException(ErrorCode.SYNC_INVALID_REQUEST, "truncated frame")));
    }

    /** Whatever else escapes, unchecked, checked or an Error, is what the client was answered as internal. */
    @Test
    void anythingElseIsAnErrorReportedAsInternal() {
        RequestOutcome internal = new RequestOutcome("error", "sync.internal_error");
        assertEquals(internal, RequestOutcome.of(new IllegalStateException("a bug")));
        assertEquals(internal, RequestOutcome.of(new IOException("client went away")));
        assertEquals(internal, RequestOutcome.of(new OutOfMemoryError()));
    }
}
