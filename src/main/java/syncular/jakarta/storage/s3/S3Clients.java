package syncular.jakarta.storage.s3;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;

/** The SDK clients both S3 stores build from {@link S3Settings}, on the JDK's HTTP transport. */
final class S3Clients {
    private S3Clients() { }

    static S3Client client(S3Settings settings) {
        S3ClientBuilder builder = S3Client.builder()
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                .region(Region.of(settings.region()))
                .credentialsProvider(credentials(settings))
                .forcePathStyle(settings.pathStyle())
                // the SDK's default CRC trailers (aws-chunked with trailing checksums) are not spoken by every
                // S3-compatible server; the stores verify content addresses themselves
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        settings.endpoint().ifPresent(builder::endpointOverride);
        return builder.build();
    }

    /** SigV4 query-string signing (SPEC §5.4 delegated presign), for the same endpoint and addressing style. */
    static S3Presigner presigner(S3Settings settings) {
        S3Presigner.Builder builder = S3Presigner.builder()
                .region(Region.of(settings.region()))
                .credentialsProvider(credentials(settings))
                .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(settings.pathStyle()).build());
        settings.endpoint().ifPresent(builder::endpointOverride);
        return builder.build();
    }

    private static AwsCredentialsProvider credentials(S3Settings settings) {
        return settings.accessKey().isPresent()
                ? StaticCredentialsProvider.create(AwsBasicCredentials.create(settings.accessKey().get(),
                        settings.secretKey().orElseThrow()))
                : DefaultCredentialsProvider.builder().build();
    }

    interface Call<T> { T run(); }

    /** S3 and transport failures are infrastructure failures, as SQL errors are for the PostgreSQL stores. */
    static <T> T call(Call<T> c) {
        try {
            return c.run();
        } catch (SdkException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
    }
}
