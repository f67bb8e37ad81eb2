package syncular.jakarta.wire;

import java.util.List;

/**
 * The schema-driven row codec (SPEC §2.4): a null bitmap of {@code ceil(n/8)} bytes (column i ↔ byte {@code i>>3},
 * bit {@code i&7}, LSB first; set = NULL), then the non-null values positionally in column order, no names, no tags.
 * Used by COMMIT rows, SSG2 rows, wire-1/2 push payloads and conflict {@code serverRow}; a wire-3 push payload is a
 * sparse row instead ({@link SparseRowCodec}), whose values use the same per-type encoding. Stateless and thread-safe.
 *
 * <p>Java value types per column type: STRING → {@link String}; INTEGER → {@link Long} (encode also takes
 * {@link Integer}, {@link Short}, {@link Byte}); FLOAT → {@link Double}, or {@link Float64Bits}
 * from {@link #decodeLossless} (encode takes either); BOOLEAN → {@link Boolean}; JSON → {@link String} (the raw,
 * validated text); BYTES and CRDT → {@code byte[]}; BLOB_REF → {@link String} (the raw, validated canonical BlobRef
 * text, SPEC §5.9.1); NULL → {@code null}.
 *
 * <p>Errors: decoding throws {@link DecodeException} ({@code sync.invalid_request}) for anything the peer got wrong.
 * Encoding throws {@link IllegalArgumentException} for a value the wire cannot carry (wrong Java type, NULL in a
 * non-nullable column, an integer outside ±(2^53−1), a lone surrogate, JSON that does not parse, a non-canonical
 * BlobRef, a value count that differs from the column count): encoding bad data is a programming error on our side,
 * never a peer's decode error.
 */
public final class RowCodec {
    /** Field names for error messages, built once: composing them per value would dominate segment decoding. */
    private static final String[] FIELDS = new String[256];
    static {
        for (int i = 0; i < FIELDS.length; i++) FIELDS[i] = "row column " + i;
    }

    private RowCodec() { }

    private static String field(int column) { return column < FIELDS.length ? FIELDS[column] : "row column"; }

    /** Decodes one standalone row; the bytes must hold exactly one row (no trailing bytes). */
    public static Object[] decode(List<ColumnDescriptor> columns, byte[] row) {
        WireReader r = new WireReader(row);
        Object[] values = read(r, columns, false);
        r.expectEnd("row");
        return values;
    }

    /** As {@link #decode}, but FLOAT values come back as {@link Float64Bits} so every bit pattern survives. */
    public static Object[] decodeLossless(List<ColumnDescriptor> columns, byte[] row) {
        WireReader r = new WireReader(row);
        Object[] values = read(r, columns, true);
        r.expectEnd("row");
        return values;
    }

    /** Checks that {@code row} is one valid row for {@code columns}, without keeping the values. */
    public static void validate(List<ColumnDescriptor> columns, byte[] row) {
        decodeLossless(columns, row);
    }

    /** Encodes one standalone row (inverse of {@link #decode}); see the class comment for the accepted types. */
    public static byte[] encode(List<ColumnDescriptor> columns, Object[] values) {
        WireWriter w = new WireWriter(16 + columns.size() * 12);
        write(w, columns, values);
        return w.toByteArray();
    }

    /** Reads one row from {@code r} (which may hold more after it). */
    public static Object[] read(WireReader r, List<ColumnDescriptor> columns, boolean lossless) {
        int n = columns.size();
        int bitmapLen = (n + 7) >>> 3;
        int bitmapAt = r.position();
        r.need(bitmapLen, "row null bitmap");
        byte[] bytes = r.array();
        int bitmapOff = r.absolutePosition(); // read in place: no per-row bitmap copy
        r.skip(bitmapLen, "row null bitmap");
        // SPEC §2.4: padding bits (positions ≥ n in the last byte) must be zero — one byte sequence per row
        if ((n & 7) != 0 && (bytes[bitmapOff + bitmapLen - 1] & 0xff) >>> (n & 7) != 0) {
            throw DecodeException.invalid("row null bitmap at offset " + bitmapAt + ": padding bit set");
        }
        Object[] out = new Object[n];
        for (int i = 0; i < n; i++) {
            ColumnDescriptor c = columns.get(i);
            if ((bytes[bitmapOff + (i >>> 3)] >>> (i & 7) & 1) != 0) {
                if (!c.nullable()) {
                    throw DecodeException.invalid("row null bitmap at offset " + bitmapAt + ": null bit set for non-nullable column " + i);
                }
                continue;
            }
            out[i] = readValue(r, c.type(), i, lossless);
        }
        return out;
    }

    /**
     * Reads one non-null value of {@code type} for column {@code column} (declaration index, for messages) with every
     * §2.4 value check. Shared with {@link SparseRowCodec}, whose values are encoded exactly like full-row values.
     */
    static Object readValue(WireReader r, TypeTag type, int column, boolean lossless) {
        String field = field(column);
        switch (type) {
            case STRING:
                return r.str(field);
            case INTEGER:
                return r.i64(field);
            case FLOAT: {
                long bits = r.f64Bits(field);
                return lossless ? new Float64Bits(bits) : (Object) Double.longBitsToDouble(bits);
            }
            case BOOLEAN:
                return r.bool(field);
            case JSON: {
                int at = r.position();
                String s = r.str(field);
                // SPEC §2.4 tag 5: validated at row decode, kept verbatim
                if (!Json.isValid(s)) {
                    throw DecodeException.invalid("row column " + column + " at offset " + at + ": json value is not a JSON document");
                }
                return s;
            }
            case BLOB_REF: {
                String s = r.str(field);
                BlobRef.parse(s); // SPEC §2.4 tag 7 / §5.9.1
                return s;
            }
            case BYTES:
            case CRDT: // SPEC §2.4 tag 8: opaque, no structural validation
                return r.bytes(field);
            default:
                throw new AssertionError(type);
        }
    }

    /** Appends one row to {@code w}. */
    public static void write(WireWriter w, List<ColumnDescriptor> columns, Object[] values) {
        int n = columns.size();
        if (values.length != n) {
            throw new IllegalArgumentException("row has " + values.length + " values for " + n + " columns");
        }
        int bitmapLen = (n + 7) >>> 3;
        int mark = w.size();
        w.zeros(bitmapLen); // the null bitmap, filled in place: no per-row array
        byte[] buf = w.array();
        for (int i = 0; i < n; i++) {
            if (values[i] == null) {
                if (!columns.get(i).nullable()) {
                    w.truncate(mark);
                    throw new IllegalArgumentException("column " + columns.get(i).name() + " is not nullable");
                }
                buf[mark + (i >>> 3)] |= (byte) (1 << (i & 7));
            }
        }
        try {
            for (int i = 0; i < n; i++) {
                if (values[i] != null) writeValue(w, columns.get(i), values[i]);
            }
        } catch (IllegalArgumentException e) {
            w.truncate(mark); // leave the writer as it was, so a caller may skip the row
            throw e;
        }
    }

    /** Writes one non-null value of column {@code c}; shared with {@link SparseRowCodec}. */
    static void writeValue(WireWriter w, ColumnDescriptor c, Object v) {
        switch (c.type()) {
            case STRING:
                w.str(expect(c, v, String.class));
                return;
            case INTEGER:
                if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
                    w.i64(((Number) v).longValue());
                    return;
                }
                throw wrongType(c, v);
            case FLOAT:
                if (v instanceof Double d) {
                    w.f64(d);
                } else if (v instanceof Float64Bits b) {
                    w.f64Bits(b.bits());
                } else {
                    throw wrongType(c, v);
                }
                return;
            case BOOLEAN:
                w.bool(expect(c, v, Boolean.class));
                return;
            case JSON: {
                String s = expect(c, v, String.class);
                if (!Json.isValid(s)) throw new IllegalArgumentException("column " + c.name() + ": not a JSON document");
                w.str(s);
                return;
            }
            case BLOB_REF: {
                String s = expect(c, v, String.class);
                if (!BlobRef.isValid(s)) throw new IllegalArgumentException("column " + c.name() + ": not a canonical BlobRef (SPEC §5.9.1)");
                w.str(s);
                return;
            }
            case BYTES:
            case CRDT:
                w.bytes(expect(c, v, byte[].class));
                return;
            default:
                throw new AssertionError(c.type());
        }
    }

    private static <T> T expect(ColumnDescriptor c, Object v, Class<T> type) {
        if (!type.isInstance(v)) throw wrongType(c, v);
        return type.cast(v);
    }

    private static IllegalArgumentException wrongType(ColumnDescriptor c, Object v) {
        return new IllegalArgumentException("column " + c.name() + " (" + c.type().schemaName() + ") cannot take a "
                + v.getClass().getSimpleName());
    }
}
