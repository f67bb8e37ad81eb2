package syncular.jakarta.wire;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Writes the SSP2 primitives (SPEC "Conventions and primitive encodings") into a growable buffer, canonically: one
 * byte sequence per value, maps always emitted in ascending UTF-16 key order. Misuse (a value the wire cannot carry:
 * an out-of-range integer, an i64 beyond ±(2^53−1), a lone surrogate, a JSON text that does not parse) throws
 * {@link IllegalArgumentException}: the encoder refuses rather than emit bytes a conforming decoder would reject.
 * Not thread-safe; reusable via {@link #reset()}.
 */
public final class WireWriter {
    private static final VarHandle I16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private byte[] buf;
    private int len;

    public WireWriter() { this(256); }

    public WireWriter(int initialCapacity) { buf = new byte[Math.max(16, initialCapacity)]; }

    public int size() { return len; }

    public void reset() { len = 0; }

    /** Drops everything written after {@code size} bytes. */
    public void truncate(int size) {
        if (size < 0 || size > len) throw new IllegalArgumentException("truncate to " + size + " of " + len);
        len = size;
    }

    public byte[] toByteArray() { return Arrays.copyOf(buf, len); }

    /** Writes the buffered bytes to {@code out} (no copy). */
    public void writeTo(OutputStream out) throws IOException { out.write(buf, 0, len); }

    /** Writes the first {@code n} buffered bytes to {@code out}. */
    void writeTo(OutputStream out, int n) throws IOException { out.write(buf, 0, n); }

    /** Drops the first {@code from} bytes, keeping the rest at the start of the buffer. */
    void compactFrom(int from) {
        System.arraycopy(buf, from, buf, 0, len - from);
        len -= from;
    }

    byte[] array() { return buf; }

    private int reserve(int n) {
        int at = len;
        int need = at + n;
        if (need < 0) throw new IllegalArgumentException("message larger than 2 GiB");
        if (need > buf.length) {
            long cap = Math.max((long) buf.length * 2, need);
            buf = Arrays.copyOf(buf, (int) Math.min(cap, Integer.MAX_VALUE - 8));
        }
        len = need;
        return at;
    }

    public WireWriter u8(int v) {
        if (v < 0 || v > 0xff) throw new IllegalArgumentException("u8 out of range: " + v);
        int at = reserve(1);
        buf[at] = (byte) v;
        return this;
    }

    public WireWriter u16(int v) {
        if (v < 0 || v > 0xffff) throw new IllegalArgumentException("u16 out of range: " + v);
        int at = reserve(2);
        I16.set(buf, at, (short) v);
        return this;
    }

    public WireWriter u32(long v) {
        if (v < 0 || v > 0xffffffffL) throw new IllegalArgumentException("u32 out of range: " + v);
        int at = reserve(4);
        I32.set(buf, at, (int) v);
        return this;
    }

    public WireWriter i32(int v) {
        int at = reserve(4);
        I32.set(buf, at, v);
        return this;
    }

    /** SPEC Conventions: never encode an {@code i64} outside ±(2^53−1). */
    public WireWriter i64(long v) {
        if (v > WireReader.MAX_SAFE || v < -WireReader.MAX_SAFE) {
            throw new IllegalArgumentException("i64 outside ±(2^53−1): " + v);
        }
        int at = reserve(8);
        I64.set(buf, at, v);
        return this;
    }

    /** Writes the raw IEEE-754 bits unchanged (NaN payloads included). */
    public WireWriter f64Bits(long bits) {
        int at = reserve(8);
        I64.set(buf, at, bits);
        return this;
    }

    public WireWriter f64(double v) { return f64Bits(Double.doubleToRawLongBits(v)); }

    public WireWriter bool(boolean v) {
        int at = reserve(1);
        buf[at] = (byte) (v ? 1 : 0);
        return this;
    }

    /** The {@code opt} presence byte. */
    public WireWriter present(boolean present) { return bool(present); }

    public WireWriter raw(byte[] b) { return raw(b, 0, b.length); }

    /** Appends {@code n} zero bytes. */
    public WireWriter zeros(int n) {
        int at = reserve(n);
        java.util.Arrays.fill(buf, at, at + n, (byte) 0);
        return this;
    }

    public WireWriter raw(byte[] b, int off, int n) {
        int at = reserve(n);
        System.arraycopy(b, off, buf, at, n);
        return this;
    }

    public WireWriter bytes(byte[] b) {
        u32(b.length);
        return raw(b);
    }

    /** {@code str}: u32 length + UTF-8. A lone surrogate has no UTF-8 form and is refused. */
    public WireWriter str(String s) {
        int n = s.length();
        int lenAt = reserve(4);
        int start = len;
        // ASCII prefix fast path, then a hand-rolled strict encoder (String.getBytes would replace lone surrogates)
        int at = reserve(n);
        int i = 0;
        byte[] b = buf;
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) break;
            b[at + i] = (byte) c;
        }
        len = at + i;
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                int p = reserve(1);
                buf[p] = (byte) c;
            } else if (c < 0x800) {
                int p = reserve(2);
                buf[p] = (byte) (0xc0 | (c >> 6));
                buf[p + 1] = (byte) (0x80 | (c & 0x3f));
            } else if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, s.charAt(++i));
                    int p = reserve(4);
                    buf[p] = (byte) (0xf0 | (cp >> 18));
                    buf[p + 1] = (byte) (0x80 | ((cp >> 12) & 0x3f));
                    buf[p + 2] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                    buf[p + 3] = (byte) (0x80 | (cp & 0x3f));
                } else {
                    len = lenAt;
                    throw new IllegalArgumentException("string contains a lone surrogate at index " + i);
                }
            } else {
                int p = reserve(3);
                buf[p] = (byte) (0xe0 | (c >> 12));
                buf[p + 1] = (byte) (0x80 | ((c >> 6) & 0x3f));
                buf[p + 2] = (byte) (0x80 | (c & 0x3f));
            }
        }
        I32.set(buf, lenAt, len - start);
        return this;
    }

    /** {@code json}: the raw text, which must be one JSON value; never re-serialized (SPEC Conventions). */
    public WireWriter json(String text) {
        if (!Json.isValid(text)) throw new IllegalArgumentException("not a JSON document");
        return str(text);
    }

    /** {@code map<str, list(str)>}, keys emitted in ascending UTF-16 code-unit order (SPEC Conventions). */
    public WireWriter scopeLists(Map<String, ? extends List<String>> m) {
        List<String> keys = new ArrayList<>(m.keySet());
        keys.sort(null);
        u32(keys.size());
        for (String k : keys) {
            str(k);
            List<String> l = m.get(k);
            u32(l.size());
            for (String v : l) str(v);
        }
        return this;
    }

    /** {@code map<str, str>}, keys emitted in ascending UTF-16 code-unit order. */
    public WireWriter stringMap(Map<String, String> m) {
        List<String> keys = new ArrayList<>(m.keySet());
        keys.sort(null);
        u32(keys.size());
        for (String k : keys) {
            str(k);
            str(m.get(k));
        }
        return this;
    }

    /** Overwrites a u32 at an earlier position (frame lengths). */
    void patchU32(int at, long v) { I32.set(buf, at, (int) v); }
}
