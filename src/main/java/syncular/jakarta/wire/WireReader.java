package syncular.jakarta.wire;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads the SSP2 primitives (SPEC "Conventions and primitive encodings") from a byte range. Little-endian, no
 * varints. Every length is checked against the bytes that remain <em>before</em> anything is allocated, so a short
 * input declaring a huge string fails fast. Every failure is a {@link DecodeException} ({@code sync.invalid_request})
 * naming the field, offset and counts, never the payload bytes. Not thread-safe: one reader per decode.
 */
public final class WireReader {
    /** JS safe-integer bound, SPEC Conventions {@code i64}. */
    public static final long MAX_SAFE = (1L << 53) - 1;

    private static final VarHandle I16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final byte[] buf;
    private final int start;
    private final int end;
    private int pos;
    private CharsetDecoder utf8; // created on the first non-ASCII string

    public WireReader(byte[] bytes) {
        this(bytes, 0, bytes.length);
    }

    public WireReader(byte[] bytes, int offset, int length) {
        if (offset < 0 || length < 0 || offset > bytes.length - length) {
            throw new IndexOutOfBoundsException("range " + offset + "+" + length + " of " + bytes.length);
        }
        this.buf = bytes;
        this.start = offset;
        this.end = offset + length;
        this.pos = offset;
    }

    /** Offset from the start of this reader's range. */
    public int position() { return pos - start; }

    public int remaining() { return end - pos; }

    public boolean atEnd() { return pos == end; }

    /** The backing array and absolute offset, for zero-copy sub-readers. */
    byte[] array() { return buf; }
    int absolutePosition() { return pos; }

    /** Throws unless at least {@code n} bytes remain; returns the absolute offset of them and consumes them. */
    private int take(long n, String field) {
        if (n > end - pos) {
            throw DecodeException.invalid(field + " at offset " + (pos - start) + ": needs " + n + " bytes, "
                    + (end - pos) + " remain");
        }
        int at = pos;
        pos += (int) n;
        return at;
    }

    /** Checks that {@code n} bytes remain without consuming them. */
    public void need(long n, String field) {
        if (n > end - pos) {
            throw DecodeException.invalid(field + " at offset " + (pos - start) + ": needs " + n + " bytes, "
                    + (end - pos) + " remain");
        }
    }

    public int u8(String field) { return buf[take(1, field)] & 0xff; }

    public int u16(String field) { return ((short) I16.get(buf, take(2, field))) & 0xffff; }

    /** An unsigned 32-bit value in a {@code long}. */
    public long u32(String field) { return Integer.toUnsignedLong((int) I32.get(buf, take(4, field))); }

    public int i32(String field) { return (int) I32.get(buf, take(4, field)); }

    /** SPEC Conventions: an {@code i64} outside ±(2^53−1) is a decode error. */
    public long i64(String field) {
        int at = take(8, field);
        long v = (long) I64.get(buf, at);
        if (v > MAX_SAFE || v < -MAX_SAFE) {
            throw DecodeException.invalid(field + " at offset " + (at - start) + ": i64 outside ±(2^53−1)");
        }
        return v;
    }

    /** The raw IEEE-754 bits of an {@code f64}: every bit pattern is valid (SPEC Conventions). */
    public long f64Bits(String field) { return (long) I64.get(buf, take(8, field)); }

    public double f64(String field) { return Double.longBitsToDouble(f64Bits(field)); }

    /** SPEC Conventions: {@code bool} is exactly 00 or 01. */
    public boolean bool(String field) {
        int at = take(1, field);
        int b = buf[at];
        if (b == 0) return false;
        if (b == 1) return true;
        throw DecodeException.invalid(field + " at offset " + (at - start) + ": bool byte is not 00 or 01");
    }

    /** SPEC Conventions {@code opt}: reads the presence byte (00 absent, 01 present, anything else an error). */
    public boolean present(String field) {
        int at = take(1, field);
        int b = buf[at];
        if (b == 0) return false;
        if (b == 1) return true;
        throw DecodeException.invalid(field + " at offset " + (at - start) + ": presence byte is not 00 or 01");
    }

    /**
     * A {@code u32} count of items each at least {@code minItemBytes} long, checked against the remaining bytes so
     * a forged count can neither allocate nor loop beyond the input.
     */
    public int count(String field, int minItemBytes) {
        int at = pos;
        long n = u32(field);
        if (n * Math.max(1, minItemBytes) > end - pos) {
            throw DecodeException.invalid(field + " at offset " + (at - start) + ": count " + n + " needs at least "
                    + n * Math.max(1, minItemBytes) + " bytes, " + (end - pos) + " remain");
        }
        return (int) n;
    }

    /** Consumes {@code n} bytes without copying them. */
    public void skip(long n, String field) { take(n, field); }

    /** {@code n} raw bytes, copied. */
    public byte[] raw(int n, String field) {
        int at = take(n, field);
        byte[] out = new byte[n];
        System.arraycopy(buf, at, out, 0, n);
        return out;
    }

    /** {@code bytes}: u32 length + raw, length checked before the copy is allocated. */
    public byte[] bytes(String field) {
        int at = pos;
        long n = u32(field);
        if (n > end - pos) {
            pos = at;
            take(4 + n, field);
        }
        return raw((int) n, field);
    }

    /** Skips a {@code bytes} value and returns its length (the value starts at {@code absolutePosition()-len}). */
    int skipBytes(String field) {
        int at = pos;
        long n = u32(field);
        if (n > end - pos) {
            pos = at;
            take(4 + n, field);
        }
        take(n, field);
        return (int) n;
    }

    /** {@code str}: u32 length + strictly well-formed UTF-8 (malformed input is reported, never replaced). */
    public String str(String field) {
        int at = pos;
        long n = u32(field);
        if (n > end - pos) {
            pos = at;
            take(4 + n, field);
        }
        int off = take(n, field);
        int len = (int) n;
        for (int i = off, e = off + len; i < e; i++) {
            if (buf[i] < 0) return decodeUtf8(off, len, field, at);
        }
        // pure ASCII: Latin-1 decoding is byte-for-byte identical and skips the validating decoder
        return new String(buf, off, len, StandardCharsets.ISO_8859_1);
    }

    private String decodeUtf8(int off, int len, String field, int at) {
        if (utf8 == null) {
            utf8 = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT);
        }
        try {
            CharBuffer cb = utf8.reset().decode(ByteBuffer.wrap(buf, off, len));
            return cb.toString();
        } catch (CharacterCodingException e) {
            throw DecodeException.invalid(field + " at offset " + (at - start) + ": malformed UTF-8");
        }
    }

    /** SPEC Conventions {@code json}: a {@code str} that must parse as one JSON value; the raw text is kept. */
    public String json(String field) {
        int at = pos;
        String s = str(field);
        if (!Json.isValid(s)) {
            throw DecodeException.invalid(field + " at offset " + (at - start) + ": not a JSON document");
        }
        return s;
    }

    /**
     * {@code map<str, list(str)>} (scope maps): keys unique and strictly ascending by UTF-16 code units, i.e.
     * {@link String#compareTo} (SPEC Conventions {@code map}). Insertion-ordered result.
     */
    public java.util.Map<String, java.util.List<String>> scopeLists(String field) {
        int n = count(field, 8);
        if (n == 0) return CanonicalMap.empty();
        String[] keys = new String[n];
        Object[] values = new Object[n];
        for (int i = 0; i < n; i++) {
            int at = pos;
            String k = str(field);
            if (i > 0 && k.compareTo(keys[i - 1]) <= 0) {
                throw DecodeException.invalid(field + " at offset " + (at - start)
                        + ": map keys not unique and ascending by UTF-16 code units");
            }
            keys[i] = k;
            int c = count(field, 4);
            String[] l = new String[c];
            for (int j = 0; j < c; j++) l[j] = str(field);
            values[i] = java.util.List.of(l);
        }
        return new CanonicalMap<>(keys, values);
    }

    /** {@code map<str, str>} (stored scopes of a change, SPEC §4.5), same key rules as {@link #scopeLists}. */
    public java.util.Map<String, String> stringMap(String field) {
        int n = count(field, 8);
        if (n == 0) return CanonicalMap.empty();
        String[] keys = new String[n];
        Object[] values = new Object[n];
        for (int i = 0; i < n; i++) {
            int at = pos;
            String k = str(field);
            if (i > 0 && k.compareTo(keys[i - 1]) <= 0) {
                throw DecodeException.invalid(field + " at offset " + (at - start)
                        + ": map keys not unique and ascending by UTF-16 code units");
            }
            keys[i] = k;
            values[i] = str(field);
        }
        return new CanonicalMap<>(keys, values);
    }

    /** Fails unless every byte of the range was consumed. */
    public void expectEnd(String what) {
        if (pos != end) {
            throw DecodeException.invalid(what + ": " + (end - pos) + " trailing bytes at offset " + (pos - start));
        }
    }
}
