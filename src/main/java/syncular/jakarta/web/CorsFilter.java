package syncular.jakarta.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.annotation.WebFilter;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * CORS for browser clients served from other origins ({@code syncular.cors.allowed-origins}: a comma-separated list
 * of exact origins, or {@code *}). Answers preflights for the headers the protocol uses ({@code Authorization},
 * {@code Content-Type}, {@code X-Syncular-Scopes}, {@code Content-Encoding}) and exposes {@code ETag}. A servlet
 * filter rather than a JAX-RS one, so preflights never reach (or 405 in) the resources. Off when unset, except that
 * a WebSocket upgrade from a browser {@code Origin} that is not listed is refused with 403 (issue 13).
 */
@WebFilter(urlPatterns = "/*", asyncSupported = true)
public class CorsFilter extends HttpFilter {
    private static final long serialVersionUID = 1L;
    static final String ALLOWED_HEADERS = "Authorization, Content-Type, Content-Encoding, X-Syncular-Scopes";
    private transient volatile Set<String> origins;

    @Override
    protected void doFilter(HttpServletRequest req, HttpServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        String origin = req.getHeader("Origin");
        Set<String> allowed = origins();
        if ("websocket".equalsIgnoreCase(req.getHeader("Upgrade")) && !allowsUpgrade(allowed, origin)) {
            // the realtime endpoint's checkOrigin refuses this upgrade too, but containers answer that differently
            // (Tyrus 403, Undertow falls through to a 404): refused here, every container answers 403
            res.sendError(HttpServletResponse.SC_FORBIDDEN);
            return;
        }
        if (origin == null || allowed.isEmpty() || !(allowed.contains("*") || allowed.contains(origin))) {
            chain.doFilter(req, res);
            return;
        }
        res.setHeader("Access-Control-Allow-Origin", allowed.contains("*") ? "*" : origin);
        res.addHeader("Vary", "Origin");
        res.setHeader("Access-Control-Expose-Headers", "ETag, Content-Encoding");
        if ("OPTIONS".equals(req.getMethod()) && req.getHeader("Access-Control-Request-Method") != null) {
            res.setHeader("Access-Control-Allow-Methods", "GET, POST, PUT, OPTIONS");
            res.setHeader("Access-Control-Allow-Headers", ALLOWED_HEADERS);
            res.setHeader("Access-Control-Max-Age", "600");
            res.setStatus(HttpServletResponse.SC_NO_CONTENT);
            return;
        }
        chain.doFilter(req, res);
    }

    /**
     * Whether a WebSocket upgrade from {@code origin} may proceed: no {@code Origin} (not a browser), or one listed
     * in {@code allowed}, or a list of {@code *}. The one rule for this filter and the realtime handshake.
     */
    static boolean allowsUpgrade(Set<String> allowed, String origin) {
        return origin == null || allowed.contains("*") || allowed.contains(origin.trim());
    }

    /** {@code syncular.cors.allowed-origins} as a set (also the WebSocket upgrade's Origin check). */
    static Set<String> configuredOrigins() {
        return parseOrigins(ConfigProvider.getConfig().getOptionalValue("syncular.cors.allowed-origins", String.class)
                .orElse(""));
    }

    static Set<String> parseOrigins(String raw) {
        return Arrays.stream(raw.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
    }

    private Set<String> origins() {
        Set<String> o = origins;
        if (o == null) {
            o = configuredOrigins();
            origins = o;
        }
        return o;
    }
}
