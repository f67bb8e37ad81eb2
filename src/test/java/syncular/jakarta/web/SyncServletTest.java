package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SyncServletTest {
    @Test
    void theMediaTypeIsTheContentTypeWithoutItsParameters() {
        assertEquals(SyncServlet.MEDIA_TYPE, SyncServlet.mediaType(SyncServlet.MEDIA_TYPE));
        assertEquals("application/vnd.syncular.sync.v2",
                SyncServlet.mediaType(" application/vnd.syncular.sync.v2 ; q=1"));
        assertEquals("Application/VND.syncular.sync.v2", SyncServlet.mediaType("Application/VND.syncular.sync.v2;"));
        assertEquals("text/plain", SyncServlet.mediaType("text/plain;charset=utf-8"));
        assertEquals("", SyncServlet.mediaType(null));
        assertEquals("", SyncServlet.mediaType(""));
    }
}
