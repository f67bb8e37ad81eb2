/**
 * The S3-compatible implementations of {@link syncular.jakarta.storage.BlobStore} and
 * {@link syncular.jakarta.storage.SegmentStore} (with its §5.4 presigner), over the AWS SDK for Java v2 with its
 * {@code HttpURLConnection} transport. ALL S3 calls of the server live in this package, as all SQL lives in
 * {@code storage.postgres}; nothing above {@code storage} sees an SDK type.
 */
package syncular.jakarta.storage.s3;
