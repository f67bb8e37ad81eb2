package syncular.jakarta.web;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.eclipse.microprofile.config.Config;
import syncular.jakarta.host.JwtAuthenticator;
import syncular.jakarta.realtime.RealtimeSettings;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.storage.s3.S3Settings;
import syncular.jakarta.sync.DeclaredReferences;
import syncular.jakarta.sync.PartitionAdmission;
import syncular.jakarta.sync.Retention;
import syncular.jakarta.sync.SyncSettings;

/**
 * Every {@code syncular.*} key the server reads, read once at start-up with its default and its check side by side
 * (STYLE §6.11). Sources are MicroProfile Config's: system properties, then environment variables
 * ({@code syncular.db.url} ↔ {@code SYNCULAR_DB_URL}), then {@code META-INF/microprofile-config.properties}.
 * A malformed value fails deployment with a message that names the key.
 *
 * @param schema          {@code syncular.schema}: schema file path or class-path resource
 * @param datasource      {@code syncular.datasource}: JNDI name of a container pool, or empty for the app-defined one
 * @param dbUrl           {@code syncular.db.url} (required unless {@code syncular.datasource} is set)
 * @param dbUser          {@code syncular.db.user} (same)
 * @param dbPassword      {@code syncular.db.password} (same; may be empty)
 * @param conformanceHost {@code syncular.conformance-host}: the test control plane, off by default
 * @param readinessRetryMaxMs {@code syncular.readiness.retry-max-ms}: the cap of the database retry backoff
 * @param auth            {@code syncular.auth.*}: the built-in authentication
 * @param limits          {@code syncular.limits.*}: request, response and protocol limits
 * @param realtime        {@code syncular.realtime.*}: WebSocket limits, heartbeat, presence (SPEC §8)
 * @param backfill        {@code syncular.backfill.*}: the RFC 0007 backfill runner
 * @param leases          {@code syncular.leases.*}: SPEC §7.3 auth leases, off unless a TTL is set
 * @param images          {@code syncular.images.*}: SPEC §5.3 SQLite bootstrap images
 * @param blobs           {@code syncular.blobs.*}: SPEC §5.9 blobs (size cap, orphan sweep)
 * @param signedUrls      {@code syncular.signed-urls.*}: SPEC §5.4 signed segment URLs, off unless a secret is set
 * @param segments        {@code syncular.segments.*}: where SPEC §5.1 segments are stored, and S3 presigned URLs
 */
public record SyncularConfig(String schema, Optional<String> datasource, Optional<String> dbUrl,
                             Optional<String> dbUser, Optional<String> dbPassword, boolean conformanceHost,
                             long readinessRetryMaxMs, Auth auth, Limits limits, RetentionSettings retention,
                             RealtimeSettings realtime, BackfillSettings backfill, LeaseSettings leases,
                             ImageSettings images, BlobSettings blobs, SignedUrlSettings signedUrls,
                             SegmentSettings segments) {
    /**
     * {@code syncular.segments.*} (SPEC §5.1, §5.4): {@code store} = {@code postgres} (the default: this database) or
     * {@code s3}, with {@code s3.bucket}, {@code s3.prefix}, {@code s3.endpoint}, {@code s3.region},
     * {@code s3.path-style}, {@code s3.access-key} and {@code s3.secret-key} as for blobs, each one absent read from
     * {@code syncular.blobs.s3.*} (the key pair as a pair; one bucket and prefix may hold both stores: their keys
     * never overlap).
     * {@code s3.presign} (default false; only with the s3 store) gives a client that set accept bit 3 a SigV4
     * presigned GET of the segment's object, fetched from the bucket with no credentials, instead of a native signed
     * URL; it is valid for {@code s3.presign-ttl-ms} (default 900000; whole seconds from 1 s to 15 min) and needs no
     * {@code syncular.signed-urls.secret}. {@code s3} is empty for the PostgreSQL store.
     */
    public record SegmentSettings(Optional<S3Settings> s3, boolean presign, long presignTtlMs) { }

    /**
     * {@code syncular.signed-urls.*} (SPEC §5.4): with {@code secret} (the base64 of at least 32 random bytes) a
     * client that sets accept bit 3 gets a {@code url} on each SEGMENT_REF, fetchable with no credentials until it
     * expires. Every node must carry the same secret: a URL minted by one node is fetched from any. {@code base-url}
     * (required with the secret) is the absolute prefix a client fetches, this server's {@code <mount>/segments} or
     * a CDN that forwards to it; {@code ttl-ms} (default 900000, the reference's 15 minutes and the spec's SHOULD
     * bound; whole seconds from 1 s) is how long a URL stays valid, which is also how long a revoked grant's URLs
     * keep working.
     */
    public record SignedUrlSettings(Optional<byte[]> secret, String baseUrl, long ttlMs) {
        public static final SignedUrlSettings OFF = new SignedUrlSettings(Optional.empty(), "", 0);

        public boolean enabled() { return secret.isPresent(); }
    }

    /**
     * {@code syncular.blobs.*} (SPEC §5.9): {@code max-bytes} (default 64 MiB, the reference's) caps one blob, by
     * its declared length and its streamed bytes (413 {@code blob.too_large}); the orphan sweep runs every
     * {@code sweep.interval-ms} (default 1 h; {@code sweep.enabled}, default true) and deletes blobs no row has
     * referenced for {@code sweep.grace-ms} (default 24 h, at least 1 min: the grace is what protects an upload whose
     * push has not landed yet, §5.9.2). {@code store} = {@code postgres} (the default: this database) or {@code s3}
     * with {@code s3.bucket} (required), {@code s3.prefix} (default {@code syncular}), {@code s3.endpoint} (an
     * http(s) URL; empty is AWS's own), {@code s3.region} (default us-east-1), {@code s3.path-style} (default false;
     * true for most S3-compatible servers) and {@code s3.access-key}/{@code s3.secret-key} (both or neither; neither
     * is the SDK's default credential chain). {@code s3} is empty for the PostgreSQL store.
     *
     * <p>{@code urls} (SPEC §5.9.3, §5.9.5): {@code inline} (the default: downloads stream through this server,
     * grants answer "none"), {@code signed} (native HMAC URLs this server serves itself under {@code url-base},
     * required: the absolute URL of its {@code <mount>/blobs}, or a CDN forwarding to it; signed with
     * {@code syncular.signed-urls.secret}, which must be set) or {@code presigned} (the S3 store's own SigV4 URLs;
     * needs {@code store=s3}). {@code url-ttl-ms} (default 900000; whole seconds from 1 s to 15 min, §5.4's bound)
     * is how long a download or upload URL stays valid.
     */
    public record BlobSettings(long maxBytes, boolean sweepEnabled, long sweepIntervalMs, long sweepGraceMs,
                               Optional<S3Settings> s3, BlobUrlMode urls, String urlBase, long urlTtlMs) { }

    /** {@code syncular.blobs.urls}: how blob bytes travel (SPEC §5.9.3, §5.9.5). */
    public enum BlobUrlMode { INLINE, SIGNED, PRESIGNED }

    /**
     * {@code syncular.images.*} (SPEC §5.3): {@code enabled} (default true) serves a whole-table SQLite image to a
     * client that accepts one (bit 2) when the table is larger than one rows page; {@code directory} (default the
     * JVM's {@code java.io.tmpdir}) is where image files are built, scratch space deleted after each build;
     * {@code concurrent-builds} (default the number of processors) bounds how many build at once on this node.
     */
    public record ImageSettings(boolean enabled, java.nio.file.Path directory, int concurrentBuilds) { }

    /**
     * {@code syncular.leases.*} (SPEC §7.3): {@code ttl-ms} is the sliding window of a client's auth lease; absent,
     * leases are off and no LEASE frame is sent. With it, {@code signing-key} is required: the base64 of at least 32
     * random bytes, the same on every node, under which lease records are signed at rest.
     */
    public record LeaseSettings(long ttlMs, Optional<byte[]> signingKey) {
        public static final LeaseSettings OFF = new LeaseSettings(0, Optional.empty());

        public boolean enabled() { return ttlMs > 0; }
    }

    /**
     * {@code syncular.backfill.*} (issue 7): {@code enabled} (default true) runs this node's backfill timer (a
     * process with the runner off still declares its definitions and serves past them); {@code batch-size}
     * (default 1000) source rows per batch transaction at most; {@code max-push-wait-ms} (default 2, issue 21) how
     * long a batch's rows may hold the partition's push lock (beyond the fixed part every push pays) while others
     * push to it; {@code interval-ms} (default 1000) between a
     * node's ticks, each of which starts the node's drain unless one runs ({@link BackfillWorker}); {@code pause-ms}
     * (default 0) a fixed pause between a drain's batches, an operator's throttle on top of the pacer;
     * {@code max-push-p95-ms} (default 0: relative, 1.5 times the p95 measured with the backfill paused, at least
     * 5 ms) the p95 of this node's pushes the pauses between batches steer to;
     * {@code definitions}: configured column-copy projections, {@code name@version:source->target[,...]}.
     */
    public record BackfillSettings(boolean enabled, int batchSize, long intervalMs, long maxPushWaitMs,
                                   long maxPushP95Ms, long pauseMs, List<syncular.jakarta.host.BackfillDefinition> definitions) { }

    /**
     * {@code syncular.retention.*}: §4.6 pruning by an EJB timer. The spec's values are floors a host may raise,
     * never lower, so a smaller value fails deployment.
     */
    public record RetentionSettings(boolean enabled, long intervalMs, Retention policy) { }

    /**
     * Built-in authentication. {@code mode} empty: every request is 401 (a deployer's own Authenticator bean
     * replaces this). {@code fixed}: one actor and partition, for development and benchmarks.
     *
     * @param allowedScopes {@code syncular.auth.fixed.allowed-scopes}: {@code *} (every variable, any value) or
     *                      {@code var=v1|v2,other=*}
     */
    public record Auth(Optional<String> mode, String fixedActor, String fixedPartition,
                       Map<String, List<String>> allowedScopes, Optional<JwtAuthenticator.Settings> jwt,
                       java.util.Set<WebSocketToken> websocketToken) { }

    /**
     * Where a WebSocket upgrade may carry its bearer token ({@code syncular.auth.websocket-token}): browsers cannot
     * set an {@code Authorization} header on an upgrade, so they offer it as a {@code Sec-WebSocket-Protocol}
     * value, or (when enabled) as the {@code access_token} query parameter.
     */
    public enum WebSocketToken {
        HEADER, PROTOCOL, QUERY;

        /** The default of {@code syncular.auth.websocket-token}: the query carrier is off (access logs). */
        public static final java.util.Set<WebSocketToken> DEFAULTS = java.util.Set.of(HEADER, PROTOCOL);
    }

    /**
     * @param maxRequestBytes         {@code syncular.limits.max-request-bytes}, counted after gzip decoding
     * @param maxResponseBytes        {@code syncular.limits.max-response-bytes}: the response byte budget
     * @param maxOperationsPerRequest {@code syncular.limits.max-operations-per-request} (§6.1)
     * @param inlineSegmentMaxBytes   {@code syncular.limits.inline-segment-max-bytes} (§5.7)
     * @param segmentTtlMs            {@code syncular.limits.segment-ttl-ms}: lifetime of a segment publication (§5.1)
     * @param responseSpillBytes      {@code syncular.limits.response-spill-bytes}: an encoded response body beyond
     *                                this goes to a temporary file before the serve-gate re-read, then streams
     * @param maxSubscriptionsPerRequest {@code syncular.limits.max-subscriptions-per-request}: SUBSCRIPTION frames
     *                                one request may carry ({@code sync.invalid_request} beyond)
     * @param admission               {@code syncular.limits.partition-concurrency}, {@code partition-queue},
     *                                {@code partition-wait-ms}: requests of one partition handled / waiting at once
     * @param lockTimeoutMs           {@code syncular.limits.lock-timeout-ms}: a push's wait for its partition lock
     * @param partitionTouchIntervalMs {@code syncular.limits.partition-touch-interval-ms}: how stale a partition's
     *                                registry activity time (and an otherwise unchanged client record's) may get
     *                                before a request rewrites it
     * @param segmentCacheBytes       {@code syncular.limits.segment-cache-bytes}: recently stored or served segment
     *                                bytes kept in memory per node for downloads (0: every download reads the
     *                                database), and as much again for bootstrap pages sent inline (0: every page is
     *                                read and encoded for each client); at most an eighth of the JVM's heap each
     * @param maxCascadeOperationsPerCommit {@code syncular.limits.max-cascade-operations-per-commit}: operations
     *                                declared references may append to one commit (§6.11)
     * @param recentCommitBytes       {@code syncular.limits.recent-commit-bytes}: the log's recent tail kept in
     *                                memory per node, so a pull whose window lies within it reads none (0: every
     *                                window is read); at most a sixteenth of the JVM's heap
     */
    public record Limits(long maxRequestBytes, long maxResponseBytes, int maxOperationsPerRequest,
                         int inlineSegmentMaxBytes, long segmentTtlMs, long responseSpillBytes,
                         int maxSubscriptionsPerRequest, PartitionAdmission.Settings admission, long lockTimeoutMs,
                         long partitionTouchIntervalMs, long segmentCacheBytes, int maxCascadeOperationsPerCommit,
                         long recentCommitBytes) {
        /** The protocol engine's view of these limits. */
        public SyncSettings settings() {
            return new SyncSettings(maxOperationsPerRequest, inlineSegmentMaxBytes, maxResponseBytes, segmentTtlMs,
                    maxSubscriptionsPerRequest, admission, maxCascadeOperationsPerCommit, segmentCacheBytes,
                    recentCommitBytes);
        }
    }

    /** The demo schema the WAR ships: the upstream quickstart's todo app. */
    public static final String DEMO_SCHEMA = "syncular/demo/syncular.ir.json";
    /** The JNDI name of the DataSource this WAR defines itself. */
    public static final String APP_DATASOURCE = "java:app/jdbc/syncular";

    public static SyncularConfig from(Config config) {
        String schema = text(config, "syncular.schema").orElse(DEMO_SCHEMA);
        Optional<String> datasource = text(config, "syncular.datasource");
        Optional<String> url = text(config, "syncular.db.url");
        Optional<String> user = text(config, "syncular.db.user");
        Optional<String> password = config.getOptionalValue("syncular.db.password", String.class);
        if (datasource.isEmpty()) {
            String u = url.orElseThrow(() -> new ConfigException(
                    "syncular.db.url is required (or set syncular.datasource to a container pool's JNDI name)"));
            if (!u.startsWith("jdbc:postgresql:") || u.contains(" ")) {
                throw new ConfigException("syncular.db.url must be a jdbc:postgresql: URL");
            }
            user.orElseThrow(() -> new ConfigException(
                    "syncular.db.user is required (or set syncular.datasource to a container pool's JNDI name)"));
            password.orElseThrow(() -> new ConfigException(
                    "syncular.db.password is required (or set syncular.datasource to a container pool's JNDI name)"));
        } else if (!datasource.get().matches("[A-Za-z][A-Za-z0-9_:/.\\-]*")) {
            throw new ConfigException("syncular.datasource must be a JNDI name such as jdbc/syncular");
        }
        boolean conformance = parsed(config, "syncular.conformance-host", SyncularConfig::bool, "true or false")
                .orElse(false);
        long retryMax = parsed(config, "syncular.readiness.retry-max-ms", Long::parseLong, "a whole number of ms")
                .orElse(30_000L);
        if (retryMax < 100) throw new ConfigException("syncular.readiness.retry-max-ms must be at least 100");
        SignedUrlSettings signed = signedUrls(config);
        return new SyncularConfig(schema, datasource, url, user, password, conformance, retryMax, auth(config),
                limits(config), retention(config), realtime(config), backfill(config), leases(config), images(config),
                blobs(config, signed), signed, segments(config));
    }

    private static SignedUrlSettings signedUrls(Config config) {
        Optional<String> secret = text(config, "syncular.signed-urls.secret");
        Optional<String> base = text(config, "syncular.signed-urls.base-url");
        Optional<Long> ttl = parsed(config, "syncular.signed-urls.ttl-ms", Long::parseLong, "a whole number of ms");
        if (secret.isEmpty()) {
            if (base.isPresent() || ttl.isPresent()) {
                throw new ConfigException("syncular.signed-urls.secret is required with syncular.signed-urls.base-url"
                        + " or syncular.signed-urls.ttl-ms: set it to turn signed URLs on, or remove the others");
            }
            return SignedUrlSettings.OFF;
        }
        byte[] decoded;
        try {
            decoded = java.util.Base64.getDecoder().decode(secret.get());
        } catch (IllegalArgumentException e) {
            throw new ConfigException("syncular.signed-urls.secret must be base64");
        }
        if (decoded.length < 32) {
            throw new ConfigException("syncular.signed-urls.secret must decode to at least 32 bytes (256 bits) of"
                    + " random data, the same on every node");
        }
        boolean constant = true;
        for (byte b : decoded) constant &= b == decoded[0];
        if (constant) {
            throw new ConfigException("syncular.signed-urls.secret is one byte repeated: use random data, e.g."
                    + " openssl rand -base64 32");
        }
        String url = base.orElseThrow(() -> new ConfigException("syncular.signed-urls.base-url is required with"
                + " syncular.signed-urls.secret: the absolute URL clients fetch segments from, e.g."
                + " https://sync.example.com/syncular/segments"));
        absoluteUrl(url, "syncular.signed-urls.base-url");
        long ttlMs = ttl.orElse(syncular.jakarta.sync.SignedUrls.DEFAULT_TTL_MS);
        if (ttlMs < 1000 || ttlMs > syncular.jakarta.sync.SignedUrls.DEFAULT_TTL_MS || ttlMs % 1000 != 0) {
            throw new ConfigException("syncular.signed-urls.ttl-ms must be whole seconds from 1000 to 900000: a URL"
                    + " is a bearer grant for its TTL (SPEC §5.4, at most 15 minutes)");
        }
        return new SignedUrlSettings(Optional.of(decoded), url, ttlMs);
    }

    /** A URL base signed URLs are minted under: absolute http(s), no query or fragment. */
    private static void absoluteUrl(String url, String key) {
        java.net.URI uri;
        try {
            uri = new java.net.URI(url);
        } catch (java.net.URISyntaxException e) {
            throw new ConfigException(key + " must be an absolute http(s) URL");
        }
        if (!("https".equals(uri.getScheme()) || "http".equals(uri.getScheme())) || uri.getHost() == null
                || uri.getQuery() != null || uri.getFragment() != null) {
            throw new ConfigException(key + " must be an absolute http(s) URL without a query");
        }
    }

    private static BlobSettings blobs(Config config, SignedUrlSettings signed) {
        long maxBytes = positive(config, "syncular.blobs.max-bytes", syncular.jakarta.sync.BlobUpload.DEFAULT_MAX_BYTES);
        boolean sweep = parsed(config, "syncular.blobs.sweep.enabled", SyncularConfig::bool, "true or false")
                .orElse(true);
        long interval = positive(config, "syncular.blobs.sweep.interval-ms", 3_600_000L);
        long grace = positive(config, "syncular.blobs.sweep.grace-ms", 86_400_000L);
        if (grace < 60_000) {
            throw new ConfigException("syncular.blobs.sweep.grace-ms must be at least 60000: a shorter grace deletes "
                    + "uploads whose referencing push is still on its way (SPEC §5.9.2)");
        }
        String store = text(config, "syncular.blobs.store").orElse("postgres");
        Optional<S3Settings> s3 = switch (store) {
            case "postgres" -> Optional.empty();
            case "s3" -> Optional.of(s3(config, "syncular.blobs.s3", Optional.empty(), "syncular.blobs.store"));
            default -> throw new ConfigException("syncular.blobs.store must be postgres or s3");
        };
        String mode = text(config, "syncular.blobs.urls").orElse("inline");
        BlobUrlMode urls = switch (mode) {
            case "inline" -> BlobUrlMode.INLINE;
            case "signed" -> BlobUrlMode.SIGNED;
            case "presigned" -> BlobUrlMode.PRESIGNED;
            default -> throw new ConfigException("syncular.blobs.urls must be inline, signed or presigned");
        };
        if (urls == BlobUrlMode.SIGNED && !signed.enabled()) {
            throw new ConfigException("syncular.blobs.urls=signed needs syncular.signed-urls.secret, the key the"
                    + " URLs are signed with");
        }
        if (urls == BlobUrlMode.PRESIGNED && s3.isEmpty()) {
            throw new ConfigException("syncular.blobs.urls=presigned needs syncular.blobs.store=s3: only an object"
                    + " store presigns its own URLs (use signed for URLs this server serves)");
        }
        Optional<String> base = text(config, "syncular.blobs.url-base");
        if (urls == BlobUrlMode.SIGNED) {
            String url = base.orElseThrow(() -> new ConfigException("syncular.blobs.url-base is required with"
                    + " syncular.blobs.urls=signed: the absolute URL clients fetch blobs from, e.g."
                    + " https://sync.example.com/syncular/blobs"));
            absoluteUrl(url, "syncular.blobs.url-base");
        } else if (base.isPresent()) {
            throw new ConfigException("syncular.blobs.url-base applies only with syncular.blobs.urls=signed");
        }
        long ttlMs = parsed(config, "syncular.blobs.url-ttl-ms", Long::parseLong, "a whole number of ms")
                .orElse(syncular.jakarta.sync.SignedUrls.DEFAULT_TTL_MS);
        if (ttlMs < 1000 || ttlMs > syncular.jakarta.sync.SignedUrls.DEFAULT_TTL_MS || ttlMs % 1000 != 0) {
            throw new ConfigException("syncular.blobs.url-ttl-ms must be whole seconds from 1000 to 900000: a URL"
                    + " is a bearer grant for its TTL (SPEC §5.9.5, at most 15 minutes)");
        }
        return new BlobSettings(maxBytes, sweep, interval, grace, s3, urls, base.orElse(""), ttlMs);
    }

    /**
     * The {@code <keys>.*} of one S3 store; each key absent there is read under {@code <fallback>.*} instead (the
     * segment store's from the blob store's), and a message names the key the value came from.
     */
    private static S3Settings s3(Config config, String keys, Optional<String> fallback, String storeKey) {
        Function<String, String> key = suffix -> fallback
                .filter(f -> config.getOptionalValue(keys + "." + suffix, String.class).isEmpty())
                .map(f -> f + "." + suffix).orElse(keys + "." + suffix);
        String bucket = text(config, key.apply("bucket")).orElseThrow(() -> new ConfigException(
                keys + ".bucket is required when " + storeKey + " is s3"));
        if (!bucket.matches("[a-z0-9][a-z0-9.\\-]{1,61}[a-z0-9]")) {
            throw new ConfigException(key.apply("bucket") + " must be an S3 bucket name");
        }
        String prefix = config.getOptionalValue(key.apply("prefix"), String.class).map(String::trim)
                .orElse("syncular");
        Optional<URI> endpoint = parsed(config, key.apply("endpoint"), URI::create, "an http(s) URL");
        if (endpoint.isPresent() && (endpoint.get().getHost() == null
                || !List.of("http", "https").contains(endpoint.get().getScheme()))) {
            throw new ConfigException(key.apply("endpoint") + " must be an http(s) URL");
        }
        String region = text(config, key.apply("region")).orElse("us-east-1");
        if (!region.matches("[a-z0-9-]+")) throw new ConfigException(key.apply("region") + " must be a region name");
        boolean pathStyle = parsed(config, key.apply("path-style"), SyncularConfig::bool, "true or false")
                .orElse(false);
        // the key pair comes from one place: both of the store's own, or both of the fallback's
        String credentials = fallback.filter(f -> config.getOptionalValue(keys + ".access-key", String.class).isEmpty()
                && config.getOptionalValue(keys + ".secret-key", String.class).isEmpty()).orElse(keys);
        Optional<String> accessKey = text(config, credentials + ".access-key");
        Optional<String> secretKey = config.getOptionalValue(credentials + ".secret-key", String.class)
                .filter(k -> !k.isEmpty());
        if (accessKey.isPresent() != secretKey.isPresent()) {
            throw new ConfigException(credentials + ".access-key and " + credentials + ".secret-key go together: "
                    + "set both, or neither for the SDK's default credential chain");
        }
        return new S3Settings(bucket, prefix, endpoint, region, pathStyle, accessKey, secretKey);
    }

    private static SegmentSettings segments(Config config) {
        String store = text(config, "syncular.segments.store").orElse("postgres");
        Optional<S3Settings> s3 = switch (store) {
            case "postgres" -> Optional.empty();
            case "s3" -> Optional.of(s3(config, "syncular.segments.s3", Optional.of("syncular.blobs.s3"),
                    "syncular.segments.store"));
            default -> throw new ConfigException("syncular.segments.store must be postgres or s3");
        };
        boolean presign = parsed(config, "syncular.segments.s3.presign", SyncularConfig::bool, "true or false")
                .orElse(false);
        Optional<Long> ttl = parsed(config, "syncular.segments.s3.presign-ttl-ms", Long::parseLong,
                "a whole number of ms");
        if ((presign || ttl.isPresent()) && s3.isEmpty()) {
            throw new ConfigException("syncular.segments.s3.presign and syncular.segments.s3.presign-ttl-ms need "
                    + "syncular.segments.store=s3: a presigned URL names an object in the segment bucket");
        }
        long ttlMs = ttl.orElse(syncular.jakarta.sync.SignedUrls.DEFAULT_TTL_MS);
        if (ttlMs < 1000 || ttlMs > syncular.jakarta.sync.SignedUrls.DEFAULT_TTL_MS || ttlMs % 1000 != 0) {
            throw new ConfigException("syncular.segments.s3.presign-ttl-ms must be whole seconds from 1000 to 900000:"
                    + " a URL is a bearer grant for its TTL (SPEC §5.4, at most 15 minutes)");
        }
        return new SegmentSettings(s3, presign, presign ? ttlMs : 0);
    }

    private static ImageSettings images(Config config) {
        boolean enabled = parsed(config, "syncular.images.enabled", SyncularConfig::bool, "true or false").orElse(true);
        java.nio.file.Path directory = java.nio.file.Path.of(text(config, "syncular.images.directory")
                .orElse(System.getProperty("java.io.tmpdir")));
        if (enabled && !java.nio.file.Files.isDirectory(directory)) {
            throw new ConfigException("syncular.images.directory must be an existing directory: " + directory);
        }
        long builds = positive(config, "syncular.images.concurrent-builds", Runtime.getRuntime().availableProcessors());
        if (builds > 1000) throw new ConfigException("syncular.images.concurrent-builds is implausibly large");
        return new ImageSettings(enabled, directory, (int) builds);
    }

    private static LeaseSettings leases(Config config) {
        Optional<Long> ttl = parsed(config, "syncular.leases.ttl-ms", Long::parseLong, "a whole number of ms");
        Optional<String> key = text(config, "syncular.leases.signing-key");
        if (ttl.isEmpty()) {
            if (key.isPresent()) {
                throw new ConfigException("syncular.leases.signing-key is set but syncular.leases.ttl-ms is not:"
                        + " set the TTL to turn auth leases on, or remove the key");
            }
            return LeaseSettings.OFF;
        }
        if (ttl.get() < 1000) throw new ConfigException("syncular.leases.ttl-ms must be at least 1000");
        byte[] decoded;
        try {
            decoded = java.util.Base64.getDecoder().decode(key.orElseThrow(() -> new ConfigException(
                    "syncular.leases.signing-key is required with syncular.leases.ttl-ms: the base64 of at least"
                            + " 32 random bytes, the same on every node")));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("syncular.leases.signing-key must be base64");
        }
        if (decoded.length < 32) {
            throw new ConfigException("syncular.leases.signing-key must decode to at least 32 bytes");
        }
        return new LeaseSettings(ttl.get(), Optional.of(decoded));
    }

    /** {@code syncular.realtime.*}; defaults in {@link RealtimeSettings#DEFAULTS}. */
    private static RealtimeSettings realtime(Config config) {
        RealtimeSettings d = RealtimeSettings.DEFAULTS;
        long maxMessage = positive(config, "syncular.realtime.max-message-bytes", d.maxMessageBytes());
        long heartbeat = positive(config, "syncular.realtime.heartbeat-ms", d.heartbeatMs());
        long maxDelta = positive(config, "syncular.realtime.max-delta-bytes", d.maxDeltaBytes());
        boolean presence = parsed(config, "syncular.realtime.presence.enabled", SyncularConfig::bool, "true or false")
                .orElse(d.presenceEnabled());
        long maxPresence = positive(config, "syncular.realtime.presence.max-bytes", d.maxPresenceBytes());
        long outboxBytes = positive(config, "syncular.realtime.outbox-max-bytes", d.outboxMaxBytes());
        long outboxMessages = positive(config, "syncular.realtime.outbox-max-messages", d.outboxMaxMessages());
        if (maxMessage < 64) throw new ConfigException("syncular.realtime.max-message-bytes must be at least 64");
        if (maxMessage > Integer.MAX_VALUE || maxDelta > Integer.MAX_VALUE || maxPresence > Integer.MAX_VALUE
                || outboxMessages > Integer.MAX_VALUE) {
            throw new ConfigException("syncular.realtime.* sizes must fit in 32 bits");
        }
        // a client that only hears heartbeats answers the ping sent with each one (§8.5: clients send nothing else),
        // so the idle timeout must leave room for at least one missed ping
        long idle = parsed(config, "syncular.realtime.idle-timeout-ms", Long::parseLong, "a whole number of ms")
                .orElse(RealtimeSettings.DEFAULT_IDLE_HEARTBEATS * heartbeat);
        if (idle != 0 && idle < 2 * heartbeat) {
            throw new ConfigException("syncular.realtime.idle-timeout-ms must be 0 (off) or at least twice "
                    + "syncular.realtime.heartbeat-ms");
        }
        long maxRound = positive(config, "syncular.realtime.max-round-bytes", d.maxRoundBytes());
        if (maxRound < 64) throw new ConfigException("syncular.realtime.max-round-bytes must be at least 64");
        long roundTimeout = positive(config, "syncular.realtime.round-timeout-ms", d.roundTimeoutMs());
        long connections = positive(config, "syncular.realtime.max-connections", d.maxConnections());
        long perActor = parsed(config, "syncular.realtime.max-connections-per-actor", Long::parseLong,
                "a whole number").orElse((long) d.maxConnectionsPerActor());
        if (perActor < 0) throw new ConfigException("syncular.realtime.max-connections-per-actor must be 0 (off) or more");
        long presenceRate = positive(config, "syncular.realtime.presence.max-per-second", d.presencePerSecond());
        long ackInterval = parsed(config, "syncular.realtime.ack-interval-ms", Long::parseLong, "a whole number of ms")
                .orElse(d.ackIntervalMs());
        if (ackInterval < 0) throw new ConfigException("syncular.realtime.ack-interval-ms must be 0 or more");
        if (connections > Integer.MAX_VALUE || perActor > Integer.MAX_VALUE || presenceRate > Integer.MAX_VALUE) {
            throw new ConfigException("syncular.realtime.* counts must fit in 32 bits");
        }
        return new RealtimeSettings((int) maxMessage, heartbeat, (int) maxDelta, presence, (int) maxPresence,
                outboxBytes, (int) outboxMessages).withHardening(idle, maxRound, roundTimeout, (int) connections,
                (int) perActor, (int) presenceRate, ackInterval);
    }

    private static BackfillSettings backfill(Config config) {
        boolean enabled = parsed(config, "syncular.backfill.enabled", SyncularConfig::bool, "true or false").orElse(true);
        long batch = positive(config, "syncular.backfill.batch-size", 1000);
        if (batch > 10_000) throw new ConfigException("syncular.backfill.batch-size must be at most 10000");
        long interval = positive(config, "syncular.backfill.interval-ms", 1000);
        long maxPushWait = positive(config, "syncular.backfill.max-push-wait-ms", 2);
        long pause = atLeastZero(config, "syncular.backfill.pause-ms", 0);
        long maxPushP95 = atLeastZero(config, "syncular.backfill.max-push-p95-ms", 0);
        List<syncular.jakarta.host.BackfillDefinition> definitions;
        try {
            definitions = syncular.jakarta.migration.ColumnCopyProjection.parseAll(
                    text(config, "syncular.backfill.definitions").orElse(""));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("syncular.backfill.definitions: " + e.getMessage());
        }
        return new BackfillSettings(enabled, (int) batch, interval, maxPushWait, maxPushP95, pause, List.copyOf(definitions));
    }

    private static RetentionSettings retention(Config config) {
        boolean enabled = parsed(config, "syncular.retention.enabled", SyncularConfig::bool, "true or false").orElse(true);
        long interval = positive(config, "syncular.retention.interval-ms", 3_600_000L);
        Retention d = Retention.DEFAULTS;
        long active = atLeast(config, "syncular.retention.active-window-ms", d.activeWindowMs());
        long force = atLeast(config, "syncular.retention.age-force-ms", d.ageForceMs());
        long keep = atLeast(config, "syncular.retention.min-retained-commits", d.minRetainedCommits());
        return new RetentionSettings(enabled, interval, new Retention(active, force, keep));
    }

    private static long atLeast(Config config, String key, long floor) {
        long v = parsed(config, key, Long::parseLong, "a whole number").orElse(floor);
        if (v < floor) throw new ConfigException(key + " must be at least " + floor + " (SPEC §4.6 floor)");
        return v;
    }

    private static Auth auth(Config config) {
        Optional<String> mode = text(config, "syncular.auth.mode");
        if (mode.isPresent() && !mode.get().equals("fixed") && !mode.get().equals("jwt")) {
            throw new ConfigException("syncular.auth.mode must be jwt or fixed");
        }
        Optional<JwtAuthenticator.Settings> jwt = mode.filter("jwt"::equals).map(m -> jwt(config));
        String actor = text(config, "syncular.auth.fixed.actor").orElse("dev-user");
        String partition = text(config, "syncular.auth.fixed.partition").orElse("default");
        Map<String, List<String>> allowed = new LinkedHashMap<>();
        String raw = text(config, "syncular.auth.fixed.allowed-scopes").orElse("");
        if (raw.equals("*")) {
            allowed.put("*", List.of("*"));
        } else if (!raw.isEmpty()) {
            for (String entry : raw.split(",")) {
                String[] kv = entry.split("=", 2);
                if (kv.length != 2 || kv[0].isBlank() || kv[1].isBlank()) {
                    throw new ConfigException("syncular.auth.fixed.allowed-scopes must be * or var=v1|v2,var2=*");
                }
                allowed.put(kv[0].trim(), List.of(kv[1].trim().split("\\|")));
            }
        }
        Optional<String> tokenCarriers = text(config, "syncular.auth.websocket-token");
        if (tokenCarriers.isEmpty()) return new Auth(mode, actor, partition, allowed, jwt, WebSocketToken.DEFAULTS);
        java.util.Set<WebSocketToken> carriers = java.util.EnumSet.noneOf(WebSocketToken.class);
        for (String c : tokenCarriers.get().split(",")) {
            String name = c.trim();
            if (name.isEmpty()) continue;
            try {
                carriers.add(WebSocketToken.valueOf(name.toUpperCase(java.util.Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new ConfigException("syncular.auth.websocket-token must be a comma-separated list of header, "
                        + "protocol, query");
            }
        }
        return new Auth(mode, actor, partition, allowed, jwt, java.util.Set.copyOf(carriers));
    }

    private static long clockSkew(Config config) {
        long ms = parsed(config, "syncular.auth.jwt.clock-skew-ms", Long::parseLong, "a whole number of ms")
                .orElse(JwtAuthenticator.DEFAULT_CLOCK_SKEW_MS);
        if (ms < 0 || ms > 300_000) {
            throw new ConfigException("syncular.auth.jwt.clock-skew-ms must be between 0 and 300000");
        }
        return ms;
    }

    /** {@code syncular.auth.jwt.*}: one verification key (HS256 secret or RS256 public key) and the claim names. */
    private static JwtAuthenticator.Settings jwt(Config config) {
        Optional<String> secret = text(config, "syncular.auth.jwt.hs256-secret");
        Optional<String> publicKey = text(config, "syncular.auth.jwt.rs256-public-key");
        if (secret.isPresent() == publicKey.isPresent()) {
            throw new ConfigException("syncular.auth.jwt.hs256-secret or syncular.auth.jwt.rs256-public-key is "
                    + "required with syncular.auth.mode=jwt (exactly one)");
        }
        byte[] secretBytes = secret.map(s -> s.getBytes(java.nio.charset.StandardCharsets.UTF_8)).orElse(null);
        if (secretBytes != null && secretBytes.length < 32) {
            throw new ConfigException("syncular.auth.jwt.hs256-secret must be at least 32 bytes (256 bits)");
        }
        JwtAuthenticator.Settings settings = new JwtAuthenticator.Settings(secretBytes, publicKey.orElse(null),
                text(config, "syncular.auth.jwt.issuer").orElse(null),
                text(config, "syncular.auth.jwt.audience").orElse(null),
                text(config, "syncular.auth.jwt.actor-claim").orElse("sub"),
                text(config, "syncular.auth.jwt.partition-claim").orElse("partition"),
                text(config, "syncular.auth.jwt.default-partition").orElse(null),
                text(config, "syncular.auth.jwt.scopes-claim").orElse("scopes"),
                clockSkew(config));
        try {
            new JwtAuthenticator(settings, syncular.jakarta.host.Clock.SYSTEM);
        } catch (IllegalArgumentException e) {
            throw new ConfigException((secret.isPresent() ? "syncular.auth.jwt.hs256-secret" : "syncular.auth.jwt.rs256-public-key")
                    + " is not a usable key");
        }
        return settings;
    }

    private static Limits limits(Config config) {
        long maxRequest = positive(config, "syncular.limits.max-request-bytes", 16L * 1024 * 1024);
        long maxResponse = positive(config, "syncular.limits.max-response-bytes", 8L * 1024 * 1024);
        long maxOps = positive(config, "syncular.limits.max-operations-per-request", 500);
        long inline = positive(config, "syncular.limits.inline-segment-max-bytes", 256L * 1024);
        long maxSubs = positive(config, "syncular.limits.max-subscriptions-per-request",
                SyncSettings.DEFAULT_MAX_SUBSCRIPTIONS_PER_REQUEST);
        long maxCascade = positive(config, "syncular.limits.max-cascade-operations-per-commit",
                DeclaredReferences.DEFAULT_MAX_CASCADE_OPERATIONS);
        if (maxOps > Integer.MAX_VALUE || inline > Integer.MAX_VALUE || maxSubs > Integer.MAX_VALUE
                || maxCascade > Integer.MAX_VALUE) {
            throw new ConfigException("syncular.limits.* values must fit in 32 bits");
        }
        long segmentTtl = positive(config, "syncular.limits.segment-ttl-ms", 24L * 3600 * 1000);
        long spill = positive(config, "syncular.limits.response-spill-bytes", 1024L * 1024);
        PartitionAdmission.Settings d = PartitionAdmission.Settings.DEFAULTS;
        long concurrency = positive(config, "syncular.limits.partition-concurrency", d.concurrency());
        long queue = atLeastZero(config, "syncular.limits.partition-queue", d.queue());
        long waitMs = atLeastZero(config, "syncular.limits.partition-wait-ms", d.waitMs());
        if (concurrency > 10_000 || queue > 100_000) {
            throw new ConfigException("syncular.limits.partition-concurrency / partition-queue are implausibly large");
        }
        long lockTimeout = positive(config, "syncular.limits.lock-timeout-ms",
                PostgresServerStorage.DEFAULT_LOCK_TIMEOUT_MS);
        long touchInterval = atLeastZero(config, "syncular.limits.partition-touch-interval-ms",
                PostgresServerStorage.DEFAULT_TOUCH_INTERVAL_MS);
        // the segment cache's budget sizes each of its two memories (segments by content address, inline pages),
        // at most an eighth of the heap; the log's recent tail at most a sixteenth: a small heap holds a storm
        // however the budgets were set
        long segmentCache = heapShare(config, "syncular.limits.segment-cache-bytes", 64L * 1024 * 1024, 8);
        long recentCommits = heapShare(config, "syncular.limits.recent-commit-bytes",
                SyncSettings.DEFAULTS.recentCommitBytes(), 16);
        return new Limits(maxRequest, maxResponse, (int) maxOps, (int) inline, segmentTtl, spill, (int) maxSubs,
                new PartitionAdmission.Settings((int) concurrency, (int) queue, waitMs), lockTimeout, touchInterval,
                segmentCache, (int) maxCascade, recentCommits);
    }

    /** A memory budget in bytes: at least 0 (off), at most 1/{@code share} of the JVM's maximum heap. */
    private static long heapShare(Config config, String key, long dflt, long share) {
        return Math.min(atLeastZero(config, key, dflt), Runtime.getRuntime().maxMemory() / share);
    }

    private static long atLeastZero(Config config, String key, long dflt) {
        long v = parsed(config, key, Long::parseLong, "a whole number").orElse(dflt);
        if (v < 0) throw new ConfigException(key + " must be at least 0");
        return v;
    }

    private static long positive(Config config, String key, long dflt) {
        long v = parsed(config, key, Long::parseLong, "a whole number").orElse(dflt);
        if (v < 1) throw new ConfigException(key + " must be at least 1");
        return v;
    }

    /** The JNDI name the storage uses: the configured container pool, else the app-defined DataSource. */
    public String dataSourceJndiName() { return datasource.orElse(APP_DATASOURCE); }

    private static Optional<String> text(Config config, String key) {
        return config.getOptionalValue(key, String.class).map(String::trim).filter(s -> !s.isEmpty());
    }

    private static <T> Optional<T> parsed(Config config, String key, Function<String, T> parse, String expected) {
        Optional<String> raw = text(config, key);
        if (raw.isEmpty()) return Optional.empty();
        try {
            return Optional.of(parse.apply(raw.get()));
        } catch (RuntimeException e) {
            throw new ConfigException(key + " must be " + expected);
        }
    }

    private static Boolean bool(String s) {
        if (s.equalsIgnoreCase("true")) return true;
        if (s.equalsIgnoreCase("false")) return false;
        throw new IllegalArgumentException();
    }
}
