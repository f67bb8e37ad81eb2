package syncular.jakarta.wire;

/**
 * SEGMENT_REF (0x14): a segment descriptor (SPEC §5.4). Optional fields are {@code null} when absent;
 * {@code urlExpiresAtMs} is present iff {@code url} is (a presence tie).
 */
public record SegmentRef(String segmentId, MediaType mediaType, String table, long byteLength, long rowCount,
        long asOfCommitSeq, String scopeDigest, String rowCursor, String nextRowCursor, String url, Long urlExpiresAtMs)
        implements ResponseFrame {
    public SegmentRef {
        Checks.nonNull(segmentId, "SEGMENT_REF.segmentId");
        if (mediaType == null) throw new IllegalArgumentException("SEGMENT_REF.mediaType is required");
        Checks.nonNull(table, "SEGMENT_REF.table");
        Checks.safe(byteLength, "SEGMENT_REF.byteLength");
        Checks.safe(rowCount, "SEGMENT_REF.rowCount");
        Checks.safe(asOfCommitSeq, "SEGMENT_REF.asOfCommitSeq");
        Checks.nonNull(scopeDigest, "SEGMENT_REF.scopeDigest");
        Checks.safe(urlExpiresAtMs, "SEGMENT_REF.urlExpiresAtMs");
        if ((url == null) != (urlExpiresAtMs == null)) {
            throw new IllegalArgumentException("SEGMENT_REF.urlExpiresAtMs must be present iff url is");
        }
    }

    @Override public int frameType() { return FrameType.SEGMENT_REF.code(); }

    public enum MediaType {
        ROWS(1, "rows"), SQLITE(2, "sqlite");

        private final int code;
        private final String jsonName;

        MediaType(int code, String jsonName) {
            this.code = code;
            this.jsonName = jsonName;
        }

        public int code() { return code; }

        public String jsonName() { return jsonName; }

        static MediaType forCode(int code) {
            return code == 1 ? ROWS : code == 2 ? SQLITE : null;
        }
    }
}
