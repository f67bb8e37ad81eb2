package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/** Where {@code GET admin/events/stream} resumes, read from {@code Last-Event-ID} before the stream starts. */
class EventsResourceTest {
    @Test
    void noLastEventIdIsLiveEventsOnly() {
        assertEquals(-1, EventsResource.resumeAfter(null));
        assertEquals(-1, EventsResource.resumeAfter(""));
        assertEquals(-1, EventsResource.resumeAfter("  "));
    }

    @Test
    void aSequenceNumberIsWhereTheTailResumes() {
        assertEquals(42, EventsResource.resumeAfter("42"));
        assertEquals(0, EventsResource.resumeAfter(" 0 "), "around the number, whitespace is no matter");
    }

    /**
     * Not a number this stream sent: refused with the ring's bad-{@code limit} code, which the exception mapper
     * answers as its status, 400, with the usual JSON error body.
     */
    @Test
    void anythingElseIsRefusedAsAnInvalidRequest() {
        for (String bad : new String[] {"abc", "12x", "1.5", "99999999999999999999"}) {
            SyncException e = assertThrows(SyncException.class, () -> EventsResource.resumeAfter(bad), bad);
            assertEquals(ErrorCode.SYNC_INVALID_REQUEST, e.code(), bad);
            assertEquals(400, e.code().httpStatus());
            assertTrue(e.getMessage().contains("Last-Event-ID"), e.getMessage());
        }
    }
}
