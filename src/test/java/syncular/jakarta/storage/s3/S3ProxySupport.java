package syncular.jakarta.storage.s3;

import java.net.URI;
import java.util.Optional;
import java.util.Properties;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * One real S3 API server per test JVM: S3Proxy over jclouds' in-memory ("transient") backend, on a free loopback
 * port, with SigV4 authentication on, so the SDK talks to it exactly as to S3 (path-style addressing). Each test
 * isolates itself by a key prefix of its own, as the PostgreSQL tests do by partition.
 */
public final class S3ProxySupport {
    public static final String BUCKET = "syncular-test";
    public static final String ACCESS_KEY = "test-access";
    public static final String SECRET_KEY = "test-secret-key";
    private static URI endpoint;

    private S3ProxySupport() { }

    /** The server's endpoint, started (and the bucket created) on first use. */
    public static synchronized URI endpoint() {
        if (endpoint != null) return endpoint;
        try {
            BlobStoreContext context = ContextBuilder.newBuilder("transient").credentials(ACCESS_KEY, SECRET_KEY)
                    .overrides(new Properties()).build(BlobStoreContext.class);
            context.getBlobStore().createContainerInLocation(null, BUCKET);
            S3Proxy proxy = S3Proxy.builder().blobStore(context.getBlobStore())
                    .endpoint(URI.create("http://127.0.0.1:0"))
                    .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
                    .build();
            proxy.start();
            while (!"STARTED".equals(proxy.getState())) Thread.sleep(5);
            endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
            return endpoint;
        } catch (Exception e) {
            throw new IllegalStateException("S3Proxy did not start", e);
        }
    }

    public static S3Settings settings(URI endpoint, String prefix) {
        return new S3Settings(BUCKET, prefix, Optional.of(endpoint), "us-east-1", true,
                Optional.of(ACCESS_KEY), Optional.of(SECRET_KEY));
    }

    /** A plain SDK client on the server, for a test to look at (or change) the bucket behind a store's back. */
    public static S3Client client() {
        return S3Client.builder().httpClientBuilder(UrlConnectionHttpClient.builder()).region(Region.US_EAST_1)
                .endpointOverride(endpoint()).forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY,
                        SECRET_KEY)))
                .build();
    }

    public static String prefix(String label) { return label + "-" + System.nanoTime(); }
}
