package syncular.jakarta.host;

import java.util.Optional;

/** What an HTTP request or WebSocket upgrade offers for authentication: headers and query parameters. */
public interface Credentials {
    /** A request header, matched case-insensitively. */
    Optional<String> header(String name);

    /** A query parameter (WebSocket upgrades carry no custom headers from browsers). */
    Optional<String> queryParameter(String name);

    /** The bearer token of an {@code Authorization: Bearer …} header. */
    default Optional<String> bearerToken() {
        return header("Authorization").map(String::trim)
                .filter(h -> h.regionMatches(true, 0, "Bearer ", 0, 7))
                .map(h -> h.substring(7).trim()).filter(t -> !t.isEmpty());
    }
}
