/**
 * SSP2 wire format: envelope, one record per frame type, SSG2 rows segments, the schema-driven row codec, §11 JSON
 * rendering, canonical JSON and the scope digest, realtime control messages (SPEC §1.2–§1.7, §2.4, §5.2, §8, §11).
 * JDK only: no jakarta.*, no java.sql, no other syncular package. A decoder checks every length against the bytes
 * that remain before it allocates.
 */
package syncular.jakarta.wire;
