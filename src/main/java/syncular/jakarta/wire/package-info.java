/**
 * SSP2 wire format: envelope, one record per frame type, SSG2 rows segments, the schema-driven row codec, §11 JSON
 * rendering, canonical JSON and the scope digest, realtime control messages (SPEC §1.2–§1.7, §2.4, §3.5, §5.2, §8,
 * §11). JDK only: no jakarta.*, no java.sql, no other syncular package. A decoder checks every length against the
 * bytes that remain before it allocates.
 *
 * <p>Entry points: {@link syncular.jakarta.wire.RequestDecoder} / {@link syncular.jakarta.wire.ResponseDecoder}
 * (bytes → {@link syncular.jakarta.wire.RequestMessage} / {@link syncular.jakarta.wire.ResponseMessage}),
 * {@link syncular.jakarta.wire.ResponseWriter} (frame-by-frame to an OutputStream, in the request's wire version),
 * {@link syncular.jakarta.wire.RequestEncoder} / {@link syncular.jakarta.wire.ResponseEncoder} (whole messages),
 * {@link syncular.jakarta.wire.RowCodec} (§2.4 rows), {@link syncular.jakarta.wire.SparseRowCodec} (wire-3 push
 * payloads), {@link syncular.jakarta.wire.RowsSegmentWriter} /
 * {@link syncular.jakarta.wire.RowsSegmentDecoder} (§5.2), {@link syncular.jakarta.wire.WireJson} (§11),
 * {@link syncular.jakarta.wire.CanonicalJson} (§3.5, §11.2), {@link syncular.jakarta.wire.RealtimeControl} (§8).
 *
 * <p>Errors: a peer's bad bytes are always {@link syncular.jakarta.wire.DecodeException} with a catalog code
 * ({@code sync.invalid_request}, or {@code sync.empty_commit} for a PUSH_COMMIT without operations); its message
 * names field, offset and counts, never payload bytes. Asking an encoder to write what the wire cannot carry is
 * {@link java.lang.IllegalArgumentException}; breaking the frame grammar while encoding is
 * {@link java.lang.IllegalStateException}.
 *
 * <p>Invariant a newcomer would break: the wire version is a parameter of every layout (see
 * {@link syncular.jakarta.wire.WireVersion}); never compare version numbers, ask WireVersion which fields a version
 * has. Versions 1, 2 and 3 are spoken side by side.
 */
package syncular.jakarta.wire;
