package syncular.jakarta.wire;

import java.util.Arrays;
import java.util.Objects;

/**
 * One decoded sparse row (SPEC @008c36d5 §2.4): which columns a wire-3 push operation writes, and their values.
 * {@code present[i]} says column i (schema-IR declaration order) is present; {@code values[i]} is its value in the
 * {@link RowCodec} Java types, or {@code null} when the column is absent <em>or</em> present and NULL — ask
 * {@link #isPresent} to tell the two apart. An absent column never carries a value.
 *
 * <p>Immutable: the arrays are copied in and out ({@link #value} reads without a copy). Equality is by content,
 * {@code byte[]} values included; {@link #toString} names the present columns' indexes, never their values.
 */
public record SparseRow(boolean[] present, Object[] values) {
    public SparseRow {
        Objects.requireNonNull(present, "present");
        Objects.requireNonNull(values, "values");
        if (present.length != values.length) {
            throw new IllegalArgumentException("sparse row has " + present.length + " presence flags for " + values.length
                    + " values");
        }
        present = present.clone();
        values = values.clone();
        for (int i = 0; i < values.length; i++) {
            if (!present[i] && values[i] != null) {
                throw new IllegalArgumentException("column " + i + " is absent but has a value");
            }
        }
    }

    /** A row with every column present: what a full row (wire 1/2 payload, stored row) means as a sparse row. */
    public static SparseRow full(Object[] values) {
        boolean[] all = new boolean[values.length];
        Arrays.fill(all, true);
        return new SparseRow(all, values);
    }

    @Override public boolean[] present() { return present.clone(); }

    @Override public Object[] values() { return values.clone(); }

    public int columnCount() { return present.length; }

    public boolean isPresent(int column) { return present[column]; }

    /** The value of column {@code column}: {@code null} when it is absent or NULL. */
    public Object value(int column) { return values[column]; }

    public int presentCount() {
        int p = 0;
        for (boolean b : present) if (b) p++;
        return p;
    }

    public boolean allPresent() { return presentCount() == present.length; }

    @Override public boolean equals(Object o) {
        return o instanceof SparseRow s && Arrays.equals(present, s.present) && Arrays.deepEquals(values, s.values);
    }

    @Override public int hashCode() { return 31 * Arrays.hashCode(present) + Arrays.deepHashCode(values); }

    @Override public String toString() {
        StringBuilder sb = new StringBuilder("SparseRow[").append(present.length).append(" columns, present=");
        String sep = "";
        sb.append('{');
        for (int i = 0; i < present.length; i++) {
            if (present[i]) {
                sb.append(sep).append(i);
                sep = ",";
            }
        }
        return sb.append("}]").toString();
    }
}
