package syncular.jakarta.wire;

import java.math.BigDecimal;
import java.util.Iterator;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A canonical BlobRef, the value of a {@code blob_ref} column (SPEC §5.9.1): keys exactly {@code blobId},
 * {@code byteLength}, then optional {@code mediaType} and {@code name}, in that order.
 */
public record BlobRef(String blobId, long byteLength, String mediaType, String name) {
    private static final Pattern BLOB_ID = Pattern.compile("sha256:[0-9a-f]{64}");
    private static final String[] KEYS = {"blobId", "byteLength", "mediaType", "name"};

    public BlobRef {
        if (blobId == null || !BLOB_ID.matcher(blobId).matches()) {
            throw new IllegalArgumentException("blobId must be \"sha256:\" + 64 lowercase hex (SPEC §5.9.1)");
        }
        if (byteLength < 0 || byteLength > WireReader.MAX_SAFE) {
            throw new IllegalArgumentException("byteLength must be a non-negative safe integer (SPEC §5.9.1)");
        }
    }

    /** The canonical text: no whitespace, absent optional keys omitted, JS {@code JSON.stringify} escaping. */
    public String toJson() {
        StringBuilder sb = new StringBuilder(96).append("{\"blobId\":");
        Json.writeString(sb, blobId);
        sb.append(",\"byteLength\":").append(byteLength);
        if (mediaType != null) {
            sb.append(",\"mediaType\":");
            Json.writeString(sb, mediaType);
        }
        if (name != null) {
            sb.append(",\"name\":");
            Json.writeString(sb, name);
        }
        return sb.append('}').toString();
    }

    /**
     * Validates a raw {@code blob_ref} string against §5.9.1 and returns it parsed; any violation is a row-codec
     * decode error ({@code sync.invalid_request}). Like the reference codec (and §5.9.1's closed list of shape
     * violations), insignificant whitespace is tolerated and a repeated key keeps its first position and last value,
     * as {@code JSON.parse} does; byteLength is judged as the JavaScript number it parses to.
     */
    public static BlobRef parse(String raw) {
        Object v;
        try {
            v = Json.parse(raw);
        } catch (Json.JsonException e) {
            throw DecodeException.invalid("blob_ref value is not a JSON document (SPEC §5.9.1)");
        }
        if (!(v instanceof Map<?, ?> m)) {
            throw DecodeException.invalid("blob_ref value must be a JSON object (SPEC §5.9.1)");
        }
        // canonical order: the present keys must appear as a subsequence of KEYS, with nothing else
        int k = 0;
        Iterator<?> it = m.keySet().iterator();
        while (it.hasNext()) {
            Object key = it.next();
            while (k < KEYS.length && !KEYS[k].equals(key)) k++;
            if (k == KEYS.length) {
                for (String known : KEYS) {
                    if (known.equals(key)) throw DecodeException.invalid("blob_ref keys are not in canonical order (SPEC §5.9.1)");
                }
                throw DecodeException.invalid("blob_ref has an unknown key (SPEC §5.9.1)");
            }
            k++;
        }
        Object id = m.get("blobId");
        if (!(id instanceof String s) || !BLOB_ID.matcher(s).matches()) {
            throw DecodeException.invalid("blob_ref.blobId must be \"sha256:<64 hex>\" (SPEC §5.9.1)");
        }
        Object len = m.get("byteLength");
        long length = -1;
        if (len instanceof BigDecimal || len instanceof Double) {
            double js = ((Number) len).doubleValue(); // what JSON.parse yields: correctly rounded binary64
            if (js >= 0 && js <= WireReader.MAX_SAFE && js == Math.rint(js)) length = (long) js;
        }
        if (length < 0) {
            throw DecodeException.invalid("blob_ref.byteLength must be a non-negative safe integer (SPEC §5.9.1)");
        }
        Object mt = m.get("mediaType");
        if (m.containsKey("mediaType") && !(mt instanceof String)) {
            throw DecodeException.invalid("blob_ref.mediaType must be a string when present (SPEC §5.9.1)");
        }
        Object nm = m.get("name");
        if (m.containsKey("name") && !(nm instanceof String)) {
            throw DecodeException.invalid("blob_ref.name must be a string when present (SPEC §5.9.1)");
        }
        return new BlobRef(s, length, (String) mt, (String) nm);
    }

    /** True iff {@code raw} is a valid BlobRef document. */
    public static boolean isValid(String raw) {
        try {
            parse(raw);
            return true;
        } catch (DecodeException e) {
            return false;
        }
    }
}
