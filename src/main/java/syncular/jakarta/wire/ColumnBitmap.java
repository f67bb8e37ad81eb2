package syncular.jakarta.wire;

import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The per-column bitmap layout of SPEC @008c36d5 §2.4: {@code ceil(columnCount/8)} bytes, column i ↔ byte
 * {@code i>>3}, bit {@code i&7}, LSB first, padding bits (positions ≥ columnCount in the last byte) zero. It is the
 * sparse-row presence bitmap ({@link SparseRowCodec}) and the wire-3 PUSH_RESULT conflict {@code conflictColumns}
 * (§6.3), whose length the envelope codec cannot check because it does not know the table. Stateless.
 *
 * <p>Building a bitmap from our own data throws {@link IllegalArgumentException}; reading a peer's bitmap
 * ({@link #indexes}) throws {@link DecodeException}.
 */
public final class ColumnBitmap {
    private ColumnBitmap() { }

    /** {@code ceil(columnCount / 8)}. */
    public static int byteLength(int columnCount) {
        if (columnCount < 0) throw new IllegalArgumentException("negative column count " + columnCount);
        return (columnCount + 7) >>> 3;
    }

    /** The bitmap with bit i set where {@code set[i]}; {@code set} has one entry per column. */
    public static byte[] of(int columnCount, boolean[] set) {
        if (set.length != columnCount) {
            throw new IllegalArgumentException("bitmap of " + columnCount + " columns given " + set.length + " flags");
        }
        byte[] b = new byte[byteLength(columnCount)];
        for (int i = 0; i < columnCount; i++) {
            if (set[i]) b[i >>> 3] |= (byte) (1 << (i & 7));
        }
        return b;
    }

    /** The bitmap with the given column indexes set (order and repeats do not matter). */
    public static byte[] ofIndexes(int columnCount, int... indexes) {
        byte[] b = new byte[byteLength(columnCount)];
        for (int i : indexes) {
            if (i < 0 || i >= columnCount) {
                throw new IllegalArgumentException("column index " + i + " outside the " + columnCount + " columns");
            }
            b[i >>> 3] |= (byte) (1 << (i & 7));
        }
        return b;
    }

    /** The bitmap marking the named columns of {@code columns}; an unknown name is our bug. */
    public static byte[] ofNames(List<ColumnDescriptor> columns, Collection<String> names) {
        Set<String> wanted = new HashSet<>(names);
        boolean[] set = new boolean[columns.size()];
        for (int i = 0; i < set.length; i++) set[i] = wanted.remove(columns.get(i).name());
        if (!wanted.isEmpty()) throw new IllegalArgumentException(wanted.size() + " column name(s) not in the table");
        return of(set.length, set);
    }

    /** Whether bit {@code i} is set; {@code i} must lie inside {@code bitmap}. */
    public static boolean isSet(byte[] bitmap, int i) { return (bitmap[i >>> 3] >>> (i & 7) & 1) != 0; }

    /**
     * The set column indexes, ascending, of a peer's bitmap for a table of {@code columnCount} columns. A wrong
     * length or a set padding bit is a decode error ({@code sync.invalid_request}).
     */
    public static int[] indexes(int columnCount, byte[] bitmap) {
        int len = byteLength(columnCount);
        if (bitmap.length != len) {
            throw DecodeException.invalid("column bitmap: " + bitmap.length + " bytes for " + columnCount
                    + " columns, " + len + " expected");
        }
        if (!paddingClear(bitmap, 0, columnCount)) throw DecodeException.invalid("column bitmap: padding bit set");
        int[] out = new int[columnCount];
        int k = 0;
        for (int i = 0; i < columnCount; i++) {
            if (isSet(bitmap, i)) out[k++] = i;
        }
        return Arrays.copyOf(out, k);
    }

    /** True when no bit at a position ≥ {@code count} is set in the bitmap of {@code count} bits at {@code off}. */
    static boolean paddingClear(byte[] b, int off, int count) {
        return (count & 7) == 0 || (b[off + byteLength(count) - 1] & 0xff) >>> (count & 7) == 0;
    }
}
