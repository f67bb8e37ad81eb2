package syncular.jakarta.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The operator console page's static files (issue 20), read once from the class path under {@code console/}. The
 * JAX-RS application is mapped at the WAR's root, so no container servlet serves them: {@link AdminResource}
 * answers them from this whitelist, and a name outside it is simply not found (no path is ever built from the
 * request). The page loads nothing from anywhere else, and {@link #CONTENT_SECURITY_POLICY} holds the browser to
 * that. Immutable, so thread-safe.
 */
final class ConsoleAssets {
    /** The page itself, answered at {@code admin/}. */
    static final String PAGE = "index.html";

    /**
     * Scripts, styles, requests and the icon from this origin only; no inline script or style, no plugins, no
     * framing, no base element, no form sent to another origin.
     */
    static final String CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; "
            + "img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
            + "frame-ancestors 'none'";

    /** Every file the page is made of, with its media type. */
    static final Map<String, String> FILES = Map.of(
            PAGE, "text/html; charset=utf-8",
            "console.js", "text/javascript; charset=utf-8",
            "console.css", "text/css; charset=utf-8",
            "console.svg", "image/svg+xml");

    /** One file: its bytes, media type and a strong entity tag (SHA-256 of the bytes, unquoted). */
    record Asset(String name, String mediaType, byte[] body, String etag) {
        /** Whether an {@code If-None-Match} header names this version (a list, weak tags and {@code *} included). */
        boolean matches(String ifNoneMatch) {
            if (ifNoneMatch == null) return false;
            for (String tag : ifNoneMatch.split(",")) {
                String t = tag.trim();
                if (t.startsWith("W/")) t = t.substring(2);
                if (t.equals("*") || t.equals("\"" + etag + "\"")) return true;
            }
            return false;
        }
    }

    private static final class Shipped {
        static final ConsoleAssets INSTANCE = new ConsoleAssets(ConsoleAssets.class.getClassLoader(), "console/");
    }

    private final Map<String, Asset> assets;

    /** Reads every whitelisted file under {@code folder}; a missing one is a packaging error, refused at once. */
    ConsoleAssets(ClassLoader loader, String folder) {
        Map<String, Asset> read = new LinkedHashMap<>();
        for (Map.Entry<String, String> f : FILES.entrySet()) {
            try (InputStream in = loader.getResourceAsStream(folder + f.getKey())) {
                if (in == null) throw new IllegalStateException("the console file " + folder + f.getKey()
                        + " is not on the class path");
                byte[] body = in.readAllBytes();
                read.put(f.getKey(), new Asset(f.getKey(), f.getValue(), body, etag(body)));
            } catch (IOException e) {
                throw new UncheckedIOException("reading the console file " + folder + f.getKey(), e);
            }
        }
        this.assets = Map.copyOf(read);
    }

    /** The files the WAR ships under {@code console/}. */
    static ConsoleAssets shipped() { return Shipped.INSTANCE; }

    /** The whitelisted file of that name, or empty for any other name. */
    Optional<Asset> find(String name) { return Optional.ofNullable(name == null ? null : assets.get(name)); }

    private static String etag(byte[] body) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(body);
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
