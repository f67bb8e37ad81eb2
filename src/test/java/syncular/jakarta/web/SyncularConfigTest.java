package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigValue;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.eclipse.microprofile.config.spi.Converter;
import org.junit.jupiter.api.Test;

class SyncularConfigTest {
    private static final Map<String, String> DB = Map.of(
            "syncular.db.url", "jdbc:postgresql://db:5432/syncular",
            "syncular.db.user", "app",
            "syncular.db.password", "secret");

    @Test
    void appliesDefaults() {
        SyncularConfig c = SyncularConfig.from(config(DB));
        assertEquals(SyncularConfig.DEMO_SCHEMA, c.schema());
        assertEquals("java:app/jdbc/syncular", c.dataSourceJndiName());
        assertFalse(c.conformanceHost());
        assertEquals(30_000L, c.readinessRetryMaxMs());
    }

    @Test
    void aContainerPoolNeedsNoDatabaseKeys() {
        SyncularConfig c = SyncularConfig.from(config(Map.of("syncular.datasource", "jdbc/syncular")));
        assertEquals("jdbc/syncular", c.dataSourceJndiName());
    }

    @Test
    void refusesMissingOrMalformedDatabaseKeysNamingTheKey() {
        assertMessage(Map.of(), "syncular.db.url is required (or set syncular.datasource to a container pool's JNDI name)");
        assertMessage(with("syncular.db.url", "postgres://db/x"), "syncular.db.url must be a jdbc:postgresql: URL");
        Map<String, String> noUser = new HashMap<>(DB);
        noUser.remove("syncular.db.user");
        assertMessage(noUser, "syncular.db.user is required (or set syncular.datasource to a container pool's JNDI name)");
    }

    @Test
    void refusesMalformedValuesNamingTheKey() {
        assertMessage(with("syncular.conformance-host", "yes"), "syncular.conformance-host must be true or false");
        assertMessage(with("syncular.readiness.retry-max-ms", "soon"),
                "syncular.readiness.retry-max-ms must be a whole number of ms");
        assertMessage(with("syncular.readiness.retry-max-ms", "5"), "syncular.readiness.retry-max-ms must be at least 100");
        assertMessage(Map.of("syncular.datasource", "jdbc/my pool"),
                "syncular.datasource must be a JNDI name such as jdbc/syncular");
        assertTrue(SyncularConfig.from(config(with("syncular.conformance-host", "TRUE"))).conformanceHost());
    }

    @Test
    void capsSubscriptionsPerRequestWithAGenerousDefault() {
        assertEquals(1000, SyncularConfig.from(config(DB)).limits().settings().maxSubscriptionsPerRequest());
        assertEquals(12, SyncularConfig.from(config(with("syncular.limits.max-subscriptions-per-request", "12")))
                .limits().settings().maxSubscriptionsPerRequest());
        assertMessage(with("syncular.limits.max-subscriptions-per-request", "many"),
                "syncular.limits.max-subscriptions-per-request must be a whole number");
        assertMessage(with("syncular.limits.max-subscriptions-per-request", "0"),
                "syncular.limits.max-subscriptions-per-request must be at least 1");
    }

    private static final syncular.jakarta.schema.CompiledSchema TASKS = syncular.jakarta.storage.TestSchemas.tasks(1);
    private static final Map<String, java.util.List<String>> TOKEN_GRANT = Map.of("project_id", java.util.List.of("p1"));

    /** Issue 13 item 9e: {@code syncular.auth.fixed.allowed-scopes} is fixed mode's grant and nobody else's. */
    @Test
    void allowedScopesAreTheResolverOnlyInFixedMode() {
        Map<String, String> fixed = with("syncular.auth.mode", "fixed");
        fixed.put("syncular.auth.fixed.allowed-scopes", "*");
        assertEquals(Map.of("project_id", java.util.List.of("*")), SyncRuntime.builtInResolver(
                SyncularConfig.from(config(fixed)), TASKS).resolveScopes(new syncular.jakarta.host.Identity("a", "p")));

        // no built-in authentication: a deployer's Authenticator bean decides who, and its identity what
        Map<String, String> deployer = with("syncular.auth.fixed.allowed-scopes", "*");
        syncular.jakarta.host.ScopeResolver r = SyncRuntime.builtInResolver(SyncularConfig.from(config(deployer)), TASKS);
        assertEquals(Map.of(), r.resolveScopes(new syncular.jakarta.host.Identity("a", "p")),
                "an identity that carries no grant gets nothing, not the fixed-mode wildcard");
        assertEquals(TOKEN_GRANT, r.resolveScopes(new syncular.jakarta.host.Identity("a", "p", TOKEN_GRANT)));

        Map<String, String> jwt = with("syncular.auth.mode", "jwt");
        jwt.put("syncular.auth.jwt.hs256-secret", "s".repeat(32));
        jwt.put("syncular.auth.fixed.allowed-scopes", "*");
        syncular.jakarta.host.ScopeResolver j = SyncRuntime.builtInResolver(SyncularConfig.from(config(jwt)), TASKS);
        assertEquals(TOKEN_GRANT, j.resolveScopes(new syncular.jakarta.host.Identity("a", "p", TOKEN_GRANT)),
                "jwt mode: the token's scopes claim");
        assertEquals(Map.of(), j.resolveScopes(new syncular.jakarta.host.Identity("a", "p")));
    }

    @Test
    void realtimeHardeningKeysHaveDefaultsAndRefuseMalformedValuesNamingTheKey() {
        SyncularConfig c = SyncularConfig.from(config(DB));
        assertEquals(90_000, c.realtime().idleTimeoutMs(), "three heartbeats");
        assertEquals(4L * 1024 * 1024, c.realtime().maxRoundBytes());
        assertEquals(10_000, c.realtime().maxConnections());
        assertEquals(0, c.realtime().maxConnectionsPerActor());
        assertEquals(java.util.Set.of(SyncularConfig.WebSocketToken.HEADER, SyncularConfig.WebSocketToken.PROTOCOL),
                c.auth().websocketToken());
        Map<String, String> fast = with("syncular.realtime.heartbeat-ms", "1000");
        assertEquals(3_000, SyncularConfig.from(config(fast)).realtime().idleTimeoutMs());
        fast.put("syncular.realtime.idle-timeout-ms", "1500");
        assertMessage(fast, "syncular.realtime.idle-timeout-ms must be 0 (off) or at least twice "
                + "syncular.realtime.heartbeat-ms");
        fast.put("syncular.realtime.idle-timeout-ms", "0");
        assertEquals(0, SyncularConfig.from(config(fast)).realtime().idleTimeoutMs());
        assertMessage(with("syncular.realtime.max-connections", "0"), "syncular.realtime.max-connections must be at least 1");
        assertMessage(with("syncular.realtime.max-connections-per-actor", "-1"),
                "syncular.realtime.max-connections-per-actor must be 0 (off) or more");
        assertMessage(with("syncular.auth.websocket-token", "header,cookie"),
                "syncular.auth.websocket-token must be a comma-separated list of header, protocol, query");
        assertEquals(java.util.Set.of(SyncularConfig.WebSocketToken.QUERY), SyncularConfig.from(
                config(with("syncular.auth.websocket-token", "query"))).auth().websocketToken());
    }

    @Test
    void leasesAreOffByDefaultAndNeedAStrongKeyWhenOn() {
        assertFalse(SyncularConfig.from(config(DB)).leases().enabled());
        String key = java.util.Base64.getEncoder().encodeToString(new byte[32]);
        Map<String, String> on = with("syncular.leases.ttl-ms", "900000");
        on.put("syncular.leases.signing-key", key);
        SyncularConfig.LeaseSettings leases = SyncularConfig.from(config(on)).leases();
        assertTrue(leases.enabled());
        assertEquals(900_000L, leases.ttlMs());
        assertEquals(32, leases.signingKey().orElseThrow().length);

        assertMessage(with("syncular.leases.ttl-ms", "900000"), "syncular.leases.signing-key is required with"
                + " syncular.leases.ttl-ms: the base64 of at least 32 random bytes, the same on every node");
        assertMessage(with("syncular.leases.signing-key", key), "syncular.leases.signing-key is set but"
                + " syncular.leases.ttl-ms is not: set the TTL to turn auth leases on, or remove the key");
        Map<String, String> shortKey = with("syncular.leases.ttl-ms", "900000");
        shortKey.put("syncular.leases.signing-key", java.util.Base64.getEncoder().encodeToString(new byte[16]));
        assertMessage(shortKey, "syncular.leases.signing-key must decode to at least 32 bytes");
        Map<String, String> notBase64 = with("syncular.leases.ttl-ms", "900000");
        notBase64.put("syncular.leases.signing-key", "not base64 at all!");
        assertMessage(notBase64, "syncular.leases.signing-key must be base64");
        assertMessage(with("syncular.leases.ttl-ms", "10"), "syncular.leases.ttl-ms must be at least 1000");
        assertMessage(with("syncular.leases.ttl-ms", "soon"), "syncular.leases.ttl-ms must be a whole number of ms");
    }

    @Test
    void imagesAreOnByDefaultBuiltInTheTemporaryDirectoryAndSegmentsCachedWithinABudget() {
        SyncularConfig defaults = SyncularConfig.from(config(DB));
        assertTrue(defaults.images().enabled());
        assertEquals(java.nio.file.Path.of(System.getProperty("java.io.tmpdir")), defaults.images().directory());
        assertEquals(Runtime.getRuntime().availableProcessors(), defaults.images().concurrentBuilds());
        assertEquals(64L * 1024 * 1024, defaults.limits().segmentCacheBytes());

        assertFalse(SyncularConfig.from(config(with("syncular.images.enabled", "false"))).images().enabled());
        assertEquals(3, SyncularConfig.from(config(with("syncular.images.concurrent-builds", "3")))
                .images().concurrentBuilds());
        assertHeapShare("syncular.limits.segment-cache-bytes", SyncularConfig.Limits::segmentCacheBytes, 8);
        assertMessage(with("syncular.images.directory", "/nonexistent/images"),
                "syncular.images.directory must be an existing directory: /nonexistent/images");
        assertMessage(with("syncular.images.concurrent-builds", "0"),
                "syncular.images.concurrent-builds must be at least 1");
        assertMessage(with("syncular.images.enabled", "sometimes"), "syncular.images.enabled must be true or false");
    }

    @Test
    void theLogsRecentTailIsKeptWithinASixteenthOfTheHeap() {
        SyncularConfig defaults = SyncularConfig.from(config(DB));
        assertEquals(Math.min(16L * 1024 * 1024, Runtime.getRuntime().maxMemory() / 16),
                defaults.limits().recentCommitBytes());
        assertEquals(defaults.limits().recentCommitBytes(), defaults.limits().settings().recentCommitBytes());
        assertHeapShare("syncular.limits.recent-commit-bytes", SyncularConfig.Limits::recentCommitBytes, 16);
    }

    /** A byte budget {@code key} sizes: 0 turns it off, it is at most 1/{@code share} of the heap, never negative. */
    private static void assertHeapShare(String key, java.util.function.ToLongFunction<SyncularConfig.Limits> budget,
                                        long share) {
        assertEquals(0, budget.applyAsLong(SyncularConfig.from(config(with(key, "0"))).limits()));
        assertEquals(Runtime.getRuntime().maxMemory() / share, budget.applyAsLong(SyncularConfig.from(config(with(
                key, String.valueOf(Long.MAX_VALUE)))).limits()), "at most 1/" + share + " of the heap");
        assertMessage(with(key, "-1"), key + " must be at least 0");
    }

    @Test
    void signedUrlsAreOffByDefaultAndNeedAStrongSecretABaseUrlAndABoundedTtl() {
        assertFalse(SyncularConfig.from(config(DB)).signedUrls().enabled());
        String secret = java.util.Base64.getEncoder().encodeToString(
                "thirty-two bytes of test secret!".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Map<String, String> on = with("syncular.signed-urls.secret", secret);
        on.put("syncular.signed-urls.base-url", "https://cdn.example.com/segments");
        SyncularConfig.SignedUrlSettings s = SyncularConfig.from(config(on)).signedUrls();
        assertTrue(s.enabled());
        assertEquals(900_000L, s.ttlMs());
        assertEquals("https://cdn.example.com/segments", s.baseUrl());
        assertEquals(32, s.secret().orElseThrow().length);
        on.put("syncular.signed-urls.ttl-ms", "60000");
        assertEquals(60_000L, SyncularConfig.from(config(on)).signedUrls().ttlMs());

        assertMessage(with("syncular.signed-urls.ttl-ms", "60000"), "syncular.signed-urls.secret is required with"
                + " syncular.signed-urls.base-url or syncular.signed-urls.ttl-ms: set it to turn signed URLs on, or"
                + " remove the others");
        assertMessage(with("syncular.signed-urls.secret", secret), "syncular.signed-urls.base-url is required with"
                + " syncular.signed-urls.secret: the absolute URL clients fetch segments from, e.g."
                + " https://sync.example.com/syncular/segments");
        Map<String, String> bad = new HashMap<>(on);
        bad.put("syncular.signed-urls.secret", java.util.Base64.getEncoder().encodeToString(new byte[31]));
        assertMessage(bad, "syncular.signed-urls.secret must decode to at least 32 bytes (256 bits) of random data,"
                + " the same on every node");
        bad.put("syncular.signed-urls.secret", java.util.Base64.getEncoder().encodeToString(new byte[32]));
        assertMessage(bad, "syncular.signed-urls.secret is one byte repeated: use random data, e.g."
                + " openssl rand -base64 32");
        bad.put("syncular.signed-urls.secret", "not base64!");
        assertMessage(bad, "syncular.signed-urls.secret must be base64");
        bad = new HashMap<>(on);
        for (String url : new String[] {"/syncular/segments", "ftp://h/segments", "https://h/segments?x=1", "h t"}) {
            bad.put("syncular.signed-urls.base-url", url);
            assertMessage(bad, url.equals("h t") ? "syncular.signed-urls.base-url must be an absolute http(s) URL"
                    : "syncular.signed-urls.base-url must be an absolute http(s) URL without a query");
        }
        bad = new HashMap<>(on);
        for (String ttl : new String[] {"0", "999", "900001", "1500", "3600000"}) {
            bad.put("syncular.signed-urls.ttl-ms", ttl);
            assertMessage(bad, "syncular.signed-urls.ttl-ms must be whole seconds from 1000 to 900000: a URL is a"
                    + " bearer grant for its TTL (SPEC §5.4, at most 15 minutes)");
        }
    }

    @Test
    void blobUrlsAreInlineUnlessSignedWithTheSecretOrPresignedByTheS3Store() {
        SyncularConfig.BlobSettings inline = SyncularConfig.from(config(DB)).blobs();
        assertEquals(SyncularConfig.BlobUrlMode.INLINE, inline.urls());
        assertEquals(900_000L, inline.urlTtlMs());
        String secret = java.util.Base64.getEncoder().encodeToString(
                "thirty-two bytes of test secret!".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Map<String, String> signed = with("syncular.blobs.urls", "signed");
        assertMessage(signed, "syncular.blobs.urls=signed needs syncular.signed-urls.secret, the key the URLs are"
                + " signed with");
        signed.put("syncular.signed-urls.secret", secret);
        signed.put("syncular.signed-urls.base-url", "https://sync.example.com/syncular/segments");
        assertMessage(signed, "syncular.blobs.url-base is required with syncular.blobs.urls=signed: the absolute URL"
                + " clients fetch blobs from, e.g. https://sync.example.com/syncular/blobs");
        signed.put("syncular.blobs.url-base", "https://sync.example.com/syncular/blobs");
        signed.put("syncular.blobs.url-ttl-ms", "300000");
        SyncularConfig.BlobSettings b = SyncularConfig.from(config(signed)).blobs();
        assertEquals(SyncularConfig.BlobUrlMode.SIGNED, b.urls());
        assertEquals("https://sync.example.com/syncular/blobs", b.urlBase());
        assertEquals(300_000L, b.urlTtlMs());
        Map<String, String> bad = new HashMap<>(signed);
        bad.put("syncular.blobs.url-base", "/syncular/blobs");
        assertMessage(bad, "syncular.blobs.url-base must be an absolute http(s) URL without a query");
        bad = new HashMap<>(signed);
        for (String ttl : new String[] {"0", "1500", "900001"}) {
            bad.put("syncular.blobs.url-ttl-ms", ttl);
            assertMessage(bad, "syncular.blobs.url-ttl-ms must be whole seconds from 1000 to 900000: a URL is a"
                    + " bearer grant for its TTL (SPEC §5.9.5, at most 15 minutes)");
        }

        assertMessage(with("syncular.blobs.urls", "presigned"), "syncular.blobs.urls=presigned needs"
                + " syncular.blobs.store=s3: only an object store presigns its own URLs (use signed for URLs this"
                + " server serves)");
        Map<String, String> presigned = with("syncular.blobs.urls", "presigned");
        presigned.put("syncular.blobs.store", "s3");
        presigned.put("syncular.blobs.s3.bucket", "media-bucket");
        assertEquals(SyncularConfig.BlobUrlMode.PRESIGNED, SyncularConfig.from(config(presigned)).blobs().urls());
        presigned.put("syncular.blobs.url-base", "https://sync.example.com/syncular/blobs");
        assertMessage(presigned, "syncular.blobs.url-base applies only with syncular.blobs.urls=signed");
        assertMessage(with("syncular.blobs.urls", "cdn"), "syncular.blobs.urls must be inline, signed or presigned");
    }

    @Test
    void theBlobStoreIsPostgresUnlessS3IsChosenWithItsBucket() {
        assertTrue(SyncularConfig.from(config(DB)).blobs().s3().isEmpty(), "PostgreSQL is the embedded default");
        Map<String, String> s3 = with("syncular.blobs.store", "s3");
        s3.put("syncular.blobs.s3.bucket", "media-bucket");
        syncular.jakarta.storage.s3.S3Settings d = SyncularConfig.from(config(s3)).blobs().s3().orElseThrow();
        assertEquals(new syncular.jakarta.storage.s3.S3Settings("media-bucket", "syncular", Optional.empty(),
                "us-east-1", false, Optional.empty(), Optional.empty()), d, "AWS, the default credential chain");

        s3.put("syncular.blobs.s3.endpoint", "http://127.0.0.1:9000");
        s3.put("syncular.blobs.s3.region", "eu-central-1");
        s3.put("syncular.blobs.s3.path-style", "true");
        s3.put("syncular.blobs.s3.prefix", "");
        s3.put("syncular.blobs.s3.access-key", "AKIA1");
        s3.put("syncular.blobs.s3.secret-key", "s3cr3t");
        syncular.jakarta.storage.s3.S3Settings all = SyncularConfig.from(config(s3)).blobs().s3().orElseThrow();
        assertEquals(new syncular.jakarta.storage.s3.S3Settings("media-bucket", "",
                Optional.of(java.net.URI.create("http://127.0.0.1:9000")), "eu-central-1", true, Optional.of("AKIA1"),
                Optional.of("s3cr3t")), all);
        assertFalse(all.toString().contains("s3cr3t"), "settings never print the secret key");
    }

    @Test
    void theSegmentStoreIsPostgresUnlessS3IsChosenAndReadsTheBlobBucketsKeysItDoesNotSetItself() {
        SyncularConfig.SegmentSettings none = SyncularConfig.from(config(DB)).segments();
        assertTrue(none.s3().isEmpty(), "PostgreSQL is the embedded default");
        assertFalse(none.presign());
        Map<String, String> s3 = with("syncular.segments.store", "s3");
        s3.put("syncular.blobs.s3.bucket", "shared-bucket");
        s3.put("syncular.blobs.s3.endpoint", "http://127.0.0.1:9000");
        s3.put("syncular.blobs.s3.path-style", "true");
        s3.put("syncular.blobs.s3.access-key", "AKIA1");
        s3.put("syncular.blobs.s3.secret-key", "s3cr3t");
        s3.put("syncular.segments.s3.prefix", "segs");
        SyncularConfig.SegmentSettings shared = SyncularConfig.from(config(s3)).segments();
        assertEquals(new syncular.jakarta.storage.s3.S3Settings("shared-bucket", "segs",
                Optional.of(java.net.URI.create("http://127.0.0.1:9000")), "us-east-1", true, Optional.of("AKIA1"),
                Optional.of("s3cr3t")), shared.s3().orElseThrow(), "the blob store's connection, its own prefix");
        assertTrue(SyncularConfig.from(config(s3)).blobs().s3().isEmpty(), "blobs stay in PostgreSQL");
        assertFalse(shared.presign(), "native signed URLs (or none) unless presign is asked for");

        s3.put("syncular.segments.s3.presign", "true");
        SyncularConfig.SegmentSettings presign = SyncularConfig.from(config(s3)).segments();
        assertTrue(presign.presign());
        assertEquals(900_000, presign.presignTtlMs(), "the spec's 15-minute bound by default");
        s3.put("syncular.segments.s3.presign-ttl-ms", "60000");
        assertEquals(60_000, SyncularConfig.from(config(s3)).segments().presignTtlMs());
    }

    @Test
    void refusesAnIncompleteOrMalformedSegmentStoreNamingTheKey() {
        assertMessage(with("syncular.segments.store", "memory"), "syncular.segments.store must be postgres or s3");
        assertMessage(with("syncular.segments.store", "s3"),
                "syncular.segments.s3.bucket is required when syncular.segments.store is s3");
        Map<String, String> s3 = with("syncular.segments.store", "s3");
        s3.put("syncular.blobs.s3.bucket", "Not_A_Bucket");
        assertMessage(s3, "syncular.blobs.s3.bucket must be an S3 bucket name");
        s3.put("syncular.segments.s3.bucket", "segments");
        s3.put("syncular.segments.s3.access-key", "AKIA1");
        assertMessage(s3, "syncular.segments.s3.access-key and syncular.segments.s3.secret-key go together: set both,"
                + " or neither for the SDK's default credential chain");
        s3.remove("syncular.segments.s3.access-key");
        for (String ttl : new String[] {"0", "999", "900001", "1500"}) {
            s3.put("syncular.segments.s3.presign-ttl-ms", ttl);
            assertMessage(s3, "syncular.segments.s3.presign-ttl-ms must be whole seconds from 1000 to 900000: a URL is"
                    + " a bearer grant for its TTL (SPEC §5.4, at most 15 minutes)");
        }
        assertMessage(with("syncular.segments.s3.presign", "true"), "syncular.segments.s3.presign and"
                + " syncular.segments.s3.presign-ttl-ms need syncular.segments.store=s3: a presigned URL names an"
                + " object in the segment bucket");
    }

    @Test
    void refusesAnIncompleteOrMalformedS3StoreNamingTheKey() {
        assertMessage(with("syncular.blobs.store", "filesystem"), "syncular.blobs.store must be postgres or s3");
        assertMessage(with("syncular.blobs.store", "s3"),
                "syncular.blobs.s3.bucket is required when syncular.blobs.store is s3");
        Map<String, String> s3 = with("syncular.blobs.store", "s3");
        s3.put("syncular.blobs.s3.bucket", "Not_A_Bucket");
        assertMessage(s3, "syncular.blobs.s3.bucket must be an S3 bucket name");
        s3.put("syncular.blobs.s3.bucket", "media");
        s3.put("syncular.blobs.s3.endpoint", "minio:9000");
        assertMessage(s3, "syncular.blobs.s3.endpoint must be an http(s) URL");
        s3.remove("syncular.blobs.s3.endpoint");
        s3.put("syncular.blobs.s3.path-style", "yes");
        assertMessage(s3, "syncular.blobs.s3.path-style must be true or false");
        s3.remove("syncular.blobs.s3.path-style");
        s3.put("syncular.blobs.s3.access-key", "AKIA1");
        assertMessage(s3, "syncular.blobs.s3.access-key and syncular.blobs.s3.secret-key go together: set both, or"
                + " neither for the SDK's default credential chain");
    }

    private static Map<String, String> with(String key, String value) {
        Map<String, String> m = new HashMap<>(DB);
        m.put(key, value);
        return m;
    }

    private static void assertMessage(Map<String, String> values, String message) {
        assertEquals(message, assertThrows(ConfigException.class, () -> SyncularConfig.from(config(values))).getMessage());
    }

    /** A map-backed MicroProfile Config: only what SyncularConfig reads. */
    private static Config config(Map<String, String> values) {
        return new Config() {
            @Override
            public <T> T getValue(String name, Class<T> type) { return getOptionalValue(name, type).orElseThrow(); }

            @Override
            public ConfigValue getConfigValue(String name) { throw new UnsupportedOperationException(); }

            @Override
            public <T> Optional<T> getOptionalValue(String name, Class<T> type) {
                return Optional.ofNullable(values.get(name)).map(type::cast);
            }

            @Override
            public Iterable<String> getPropertyNames() { return values.keySet(); }

            @Override
            public Iterable<ConfigSource> getConfigSources() { return java.util.List.of(); }

            @Override
            public <T> Optional<Converter<T>> getConverter(Class<T> type) { return Optional.empty(); }

            @Override
            public <T> T unwrap(Class<T> type) { throw new UnsupportedOperationException(); }
        };
    }
}
