package syncular.jakarta.wire;

/**
 * ERROR (0x1F): an in-band failure after streaming started; only END may follow (SPEC §1.6). Field order differs from
 * the JSON error body. {@code detailsJson} is raw JSON, {@code null} when absent.
 */
public record ErrorFrame(String code, String message, String category, boolean retryable, String recommendedAction,
        String detailsJson) implements ResponseFrame {
    public ErrorFrame {
        Checks.nonNull(code, "ERROR.code");
        Checks.nonNull(message, "ERROR.message");
        Checks.nonNull(category, "ERROR.category");
        Checks.nonNull(recommendedAction, "ERROR.recommendedAction");
        Checks.json(detailsJson, "ERROR.details");
    }

    /** An ERROR for a catalog code: category, retryability and action are fixed per code (SPEC §10.2). */
    public static ErrorFrame of(ErrorCode code, String message, String detailsJson) {
        return new ErrorFrame(code.wire(), message, code.category().wire(), code.retryable(), code.action().wire(), detailsJson);
    }

    @Override public int frameType() { return FrameType.ERROR.code(); }
}
