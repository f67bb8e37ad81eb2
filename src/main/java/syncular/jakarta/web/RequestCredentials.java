package syncular.jakarta.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.UriInfo;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import syncular.jakarta.host.Credentials;

/** An HTTP request's {@link Credentials}: its headers and its query parameters. */
final class RequestCredentials {
    private RequestCredentials() { }

    /** For a JAX-RS resource. */
    static Credentials of(HttpHeaders headers, UriInfo uri) {
        return new Credentials() {
            @Override
            public Optional<String> header(String name) { return Optional.ofNullable(headers.getHeaderString(name)); }

            @Override
            public Optional<String> queryParameter(String name) {
                return Optional.ofNullable(uri.getQueryParameters().getFirst(name));
            }
        };
    }

    /**
     * For a servlet: query parameters from the query string only, never {@code getParameter}, which would read a
     * form body.
     */
    static Credentials of(HttpServletRequest req) {
        return new Credentials() {
            @Override
            public Optional<String> header(String name) { return Optional.ofNullable(req.getHeader(name)); }

            @Override
            public Optional<String> queryParameter(String name) { return first(req.getQueryString(), name); }
        };
    }

    /** The first value of {@code name} in a raw query string, percent-decoded. */
    static Optional<String> first(String query, String name) {
        if (query == null || query.isEmpty()) return Optional.empty();
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            try {
                if (URLDecoder.decode(key, StandardCharsets.UTF_8).equals(name)) {
                    return Optional.of(eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            } catch (IllegalArgumentException malformed) {
                // a pair with a malformed escape names no parameter
            }
        }
        return Optional.empty();
    }
}
