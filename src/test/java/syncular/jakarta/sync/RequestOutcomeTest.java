package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
