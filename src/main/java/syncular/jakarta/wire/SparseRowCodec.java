package syncular.jakarta.wire;

import java.util.List;

/**
 * The sparse row codec of wire version 3 (SPEC @008c36d5 §2.4 "Sparse rows", §6.1): the {@code payload} of a wire-3
 * PUSH_COMMIT upsert names the columns it writes. For a table of {@code n} columns in declaration order:
 * <ol>
 *   <li>a presence bitmap of {@code ceil(n/8)} bytes ({@link ColumnBitmap} layout), bit i set when column i is
 *       present, padding bits zero;</li>
 *   <li>a null bitmap over the {@code p} present columns, {@code ceil(p/8)} bytes in the same layout: bit j refers to
 *       the j-th present column; padding bits zero;</li>
 *   <li>the non-null present values in declaration order, each exactly as in a full row ({@link RowCodec}).</li>
 * </ol>
 * The primary-key column is always present, so {@code p ≥ 1}. An all-present row still carries both bitmaps; when
 * {@code n} is a multiple of 8 its bytes are the full-row bytes behind an all-ones presence bitmap.
 *
 * <p>Only push payloads are sparse: COMMIT rows, SSG2 rows, images and conflict {@code serverRow} stay full rows.
 * The envelope codec carries payloads as opaque bytes; the push pipeline decodes them here when
 * {@link WireVersion#hasSparsePayloads} holds for the request, and a failure rejects that commit alone with
 * {@code sync.invalid_request} (§1.7 commit-level).
 *
 * <p>Decode checks, in the order the spec fixes, each a {@link DecodeException} {@code sync.invalid_request}: a set
 * presence padding bit; an absent primary-key column; a set bit in the null bitmap's padding region (a null for an
 * absent column); a null bit on a non-nullable column; then the per-type value checks of {@link RowCodec}; then
 * trailing bytes. Truncation anywhere is a decode error too. Encoding refuses, with
 * {@link IllegalArgumentException}, everything decoding would reject — an absent primary key included — so every
 * encoded payload decodes. Stateless and thread-safe.
 */
public final class SparseRowCodec {
    private SparseRowCodec() { }

    /** Decodes one standalone sparse row; FLOAT values come back as {@link Double}. */
    public static SparseRow decode(List<ColumnDescriptor> columns, int primaryKeyIndex, byte[] payload) {
        return read(columns, primaryKeyIndex, payload, false);
    }

    /** As {@link #decode}, but FLOAT values come back as {@link Float64Bits}, so re-encoding is byte-exact. */
    public static SparseRow decodeLossless(List<ColumnDescriptor> columns, int primaryKeyIndex, byte[] payload) {
        return read(columns, primaryKeyIndex, payload, true);
    }

    /** Checks that {@code payload} is one valid sparse row for {@code columns}, without keeping it. */
    public static void validate(List<ColumnDescriptor> columns, int primaryKeyIndex, byte[] payload) {
        read(columns, primaryKeyIndex, payload, true);
    }

    /** Encodes {@code row} (inverse of {@link #decode}); see {@link #encode(List, int, boolean[], Object[])}. */
    public static byte[] encode(List<ColumnDescriptor> columns, int primaryKeyIndex, SparseRow row) {
        return encode(columns, primaryKeyIndex, row.present(), row.values());
    }

    /**
     * Encodes one sparse row. {@code present} and {@code values} have one entry per column; the value types are
     * those of {@link RowCodec}. Throws {@link IllegalArgumentException} when the primary-key column
     * ({@code primaryKeyIndex}) is absent, an absent column carries a value, a present non-nullable column is NULL,
     * or a value does not fit its column.
     */
    public static byte[] encode(List<ColumnDescriptor> columns, int primaryKeyIndex, boolean[] present, Object[] values) {
        int n = columns.size();
        checkPrimaryKeyIndex(n, primaryKeyIndex);
        if (present.length != n || values.length != n) {
            throw new IllegalArgumentException("sparse row has " + present.length + " presence flags and " + values.length
                    + " values for " + n + " columns");
        }
        if (!present[primaryKeyIndex]) {
            throw new IllegalArgumentException("primary-key column " + columns.get(primaryKeyIndex).name()
                    + " must be present");
        }
        int p = 0;
        for (int i = 0; i < n; i++) {
            if (present[i]) {
                p++;
            } else if (values[i] != null) {
                throw new IllegalArgumentException("column " + columns.get(i).name() + " is absent but has a value");
            }
        }
        WireWriter w = new WireWriter(16 + p * 12);
        w.raw(ColumnBitmap.of(n, present));
        int nullsAt = w.size();
        w.zeros(ColumnBitmap.byteLength(p)); // the null bitmap over the present columns, filled in place
        byte[] buf = w.array();
        for (int i = 0, j = 0; i < n; i++) {
            if (!present[i]) continue;
            if (values[i] == null) {
                if (!columns.get(i).nullable()) {
                    throw new IllegalArgumentException("column " + columns.get(i).name() + " is not nullable");
                }
                buf[nullsAt + (j >>> 3)] |= (byte) (1 << (j & 7));
            }
            j++;
        }
        for (int i = 0; i < n; i++) {
            if (present[i] && values[i] != null) RowCodec.writeValue(w, columns.get(i), values[i]);
        }
        return w.toByteArray();
    }

    private static SparseRow read(List<ColumnDescriptor> columns, int primaryKeyIndex, byte[] payload, boolean lossless) {
        int n = columns.size();
        checkPrimaryKeyIndex(n, primaryKeyIndex);
        WireReader r = new WireReader(payload);
        byte[] presence = r.raw(ColumnBitmap.byteLength(n), "sparse row presence bitmap");
        // SPEC §2.4 sparse rows, check 1: presence padding bits are zero (one byte sequence per row)
        if (!ColumnBitmap.paddingClear(presence, 0, n)) {
            throw DecodeException.invalid("sparse row presence bitmap at offset 0: padding bit set (" + n + " columns)");
        }
        boolean[] present = new boolean[n];
        int p = 0;
        for (int i = 0; i < n; i++) {
            if (ColumnBitmap.isSet(presence, i)) {
                present[i] = true;
                p++;
            }
        }
        // check 2: the primary key is always present
        if (!present[primaryKeyIndex]) {
            throw DecodeException.invalid("sparse row presence bitmap at offset 0: primary-key column " + primaryKeyIndex
                    + " is absent");
        }
        int nullsAt = r.position();
        byte[] nulls = r.raw(ColumnBitmap.byteLength(p), "sparse row null bitmap");
        // check 3: a bit past the present columns would be a null for an absent column
        if (!ColumnBitmap.paddingClear(nulls, 0, p)) {
            throw DecodeException.invalid("sparse row null bitmap at offset " + nullsAt + ": padding bit set past the " + p
                    + " present columns (a null for an absent column)");
        }
        // check 4: a null bit on a non-nullable column; all four bitmap checks precede any value check
        boolean[] isNull = new boolean[n];
        for (int i = 0, j = 0; i < n; i++) {
            if (!present[i]) continue;
            if (ColumnBitmap.isSet(nulls, j)) {
                if (!columns.get(i).nullable()) {
                    throw DecodeException.invalid("sparse row null bitmap at offset " + nullsAt
                            + ": null bit set for non-nullable column " + i);
                }
                isNull[i] = true;
            }
            j++;
        }
        Object[] values = new Object[n];
        for (int i = 0; i < n; i++) {
            if (present[i] && !isNull[i]) values[i] = RowCodec.readValue(r, columns.get(i).type(), i, lossless);
        }
        r.expectEnd("sparse row");
        return new SparseRow(present, values);
    }

    private static void checkPrimaryKeyIndex(int columnCount, int primaryKeyIndex) {
        if (primaryKeyIndex < 0 || primaryKeyIndex >= columnCount) {
            throw new IllegalArgumentException("primary-key index " + primaryKeyIndex + " outside the " + columnCount
                    + " columns");
        }
    }
}
