package syncular.jakarta.storage.s3;

import java.net.URI;
import java.util.Optional;

/**
 * How to reach one S3-compatible bucket: {@code endpoint} empty means AWS's own for the region; {@code accessKey}
 * empty means the SDK's default credential chain (environment, profile, container or instance role). The blob and
 * the segment store each take one; their key layouts never overlap, so both may share a bucket and prefix.
 */
public record S3Settings(String bucket, String prefix, Optional<URI> endpoint, String region, boolean pathStyle,
                         Optional<String> accessKey, Optional<String> secretKey) {
    public S3Settings {
        if (accessKey.isPresent() != secretKey.isPresent()) {
            throw new IllegalArgumentException("an access key needs its secret key, and the other way round");
        }
    }

    /** The prefix as a key root: empty, or without leading or trailing slashes and with one slash after it. */
    String root() {
        String p = prefix == null ? "" : prefix.replaceAll("^/+|/+$", "");
        return p.isEmpty() ? "" : p + "/";
    }

    /** Never the secret key: settings end up in logs. */
    @Override
    public String toString() {
        return "S3 bucket " + bucket + " prefix '" + prefix + "' endpoint " + endpoint.map(URI::toString)
                .orElse("(AWS)") + " region " + region + (pathStyle ? " path-style" : "")
                + (accessKey.isPresent() ? " with a static access key" : " with the default credential chain");
    }
}
