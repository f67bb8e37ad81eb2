package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Credentials;
import syncular.jakarta.web.SyncularConfig.WebSocketToken;

/**
 * The upgrade's credentials (issue 13): the bearer token comes from the enabled carriers only — the
 * {@code Authorization} header, a {@code syncular.bearer.<token>} subprotocol value, the {@code access_token} query
 * parameter — and the subprotocol answered is the {@code syncular} marker, never the token (RFC 6455 §4.2.2).
 */
class RealtimeHandshakeTest {
    private static RealtimeEndpoint.Handshake.Upgrade upgrade(Map<String, List<String>> headers,
                                                              Map<String, List<String>> params) {
        Map<String, List<String>> h = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        h.putAll(headers);
        return new RealtimeEndpoint.Handshake.Upgrade(h, params);
    }

    private static Optional<String> bearer(RealtimeEndpoint.Handshake.Upgrade u, Set<WebSocketToken> carriers) {
        Credentials c = u.credentials(carriers);
        return c.bearerToken();
    }

    @Test
    void theTokenComesFromTheEnabledCarriersOnly() {
        Set<WebSocketToken> defaults = EnumSet.of(WebSocketToken.HEADER, WebSocketToken.PROTOCOL);
        var header = upgrade(Map.of("authorization", List.of("Bearer h.t.x")), Map.of());
        assertEquals(Optional.of("h.t.x"), bearer(header, defaults));
        assertEquals(Optional.empty(), bearer(header, EnumSet.of(WebSocketToken.PROTOCOL)), "header carrier off");

        var protocol = upgrade(Map.of("Sec-WebSocket-Protocol", List.of("syncular, syncular.bearer.p.t.x")), Map.of());
        assertEquals(Optional.of("p.t.x"), bearer(protocol, defaults));
        assertEquals(Optional.empty(), bearer(protocol, EnumSet.of(WebSocketToken.HEADER)));

        var query = upgrade(Map.of(), Map.of("clientId", List.of("c"), "access_token", List.of("q.t.x")));
        assertEquals(Optional.empty(), bearer(query, defaults), "the query carrier is off by default");
        assertEquals(Optional.of("q.t.x"), bearer(query, EnumSet.of(WebSocketToken.QUERY)));
        assertEquals(Optional.of("c"), query.credentials(defaults).queryParameter("clientId"));
    }

    @Test
    void theSubprotocolAnsweredIsTheMarkerNeverTheToken() {
        RealtimeEndpoint.Handshake h = new RealtimeEndpoint.Handshake();
        assertEquals("syncular", h.getNegotiatedSubprotocol(List.of("syncular"),
                List.of("syncular.bearer.secret", "syncular")));
        assertEquals("syncular", h.getNegotiatedSubprotocol(List.of("syncular"), List.of("syncular.bearer.s, syncular")));
        assertEquals("", h.getNegotiatedSubprotocol(List.of("syncular"), List.of("syncular.bearer.secret")));
        assertEquals("", h.getNegotiatedSubprotocol(List.of("syncular"), List.of()));
    }

    @Test
    void anUpgradeWithoutOriginIsNotABrowserAndIsAllowed() {
        assertEquals(true, new RealtimeEndpoint.Handshake().checkOrigin(null));
        assertEquals(Set.of("https://a.example", "*"), CorsFilter.parseOrigins(" https://a.example, *,"));
    }
}
