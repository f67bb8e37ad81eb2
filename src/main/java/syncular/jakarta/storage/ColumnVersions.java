package syncular.jakarta.storage;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.TreeMap;

/**
 * A row's per-column versions (SPEC §2.2 at wire 3, WIRE3-DELTA §3): every column's version is the row's
 * {@code server_version} at that column's last write. Stored as {@code _sync_column_versions}, one nullable blob per
 * row: LEB128 varint pairs {@code (ordinal, version)}, ascending by ordinal, listing only versions above 1; NULL
 * ({@link #NONE}) lists nothing.
 *
 * <p>Reading a column's effective version follows the reference exactly: the listed version, else 1 when the blob is
 * present, else (no blob: a row only full-row writes touched, or a legacy row) the row's current version. Immutable.
 */
public final class ColumnVersions {
    /** No blob: every column reads at the row's current version. */
    public static final ColumnVersions NONE = new ColumnVersions(null);

    /** Versions by ordinal for columns above 1; null for {@link #NONE}. */
    private final long[] versions;

    private ColumnVersions(long[] versions) { this.versions = versions; }

    /** The effective version of column {@code ordinal} of a row at {@code serverVersion}. */
    public long of(int ordinal, long serverVersion) {
        if (versions == null) return serverVersion;
        return ordinal < versions.length && versions[ordinal] > 1 ? versions[ordinal] : 1;
    }

    /**
     * The versions after a write that moves the {@code written} columns of a row at {@code serverVersion} (0: the
     * row is new) to {@code newVersion}; the others keep their effective version. As the reference, a result that
     * lists nothing above 1 is {@link #NONE}: a primary-key-only write to a version-1 row then reads every column at
     * the new version.
     */
    public ColumnVersions written(int columnCount, long serverVersion, boolean[] written, long newVersion) {
        long[] next = new long[columnCount];
        boolean any = false;
        for (int i = 0; i < columnCount; i++) {
            next[i] = written[i] ? newVersion : serverVersion == 0 ? 1 : of(i, serverVersion);
            any |= next[i] > 1;
        }
        return any ? new ColumnVersions(next) : NONE;
    }

    /** The stored blob, or null for {@link #NONE}. */
    public byte[] toBytes() {
        if (versions == null) return null;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < versions.length; i++) {
            if (versions[i] <= 1) continue;
            varint(out, i);
            varint(out, versions[i]);
        }
        return out.toByteArray();
    }

    /**
     * The versions of a stored blob; null is {@link #NONE}.
     *
     * @throws StorageException {@link StorageErrorCode#UNCLASSIFIED} for a blob this format cannot have written
     *                          (truncated varint, ordinals not ascending)
     */
    public static ColumnVersions fromBytes(byte[] blob) {
        if (blob == null) return NONE;
        TreeMap<Integer, Long> listed = new TreeMap<>();
        int[] at = {0};
        int previous = -1;
        while (at[0] < blob.length) {
            long ordinal = readVarint(blob, at);
            long version = readVarint(blob, at);
            if (ordinal <= previous || ordinal > Integer.MAX_VALUE - 1) throw corrupt("ordinals not ascending");
            previous = (int) ordinal;
            listed.put((int) ordinal, version);
        }
        long[] versions = new long[listed.isEmpty() ? 0 : listed.lastKey() + 1];
        listed.forEach((i, v) -> versions[i] = v);
        return new ColumnVersions(versions);
    }

    private static void varint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    private static long readVarint(byte[] b, int[] at) {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at[0] >= b.length) throw corrupt("truncated varint");
            int x = b[at[0]++] & 0xFF;
            v |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) return v;
        }
        throw corrupt("varint longer than 64 bits");
    }

    private static StorageException corrupt(String why) {
        return new StorageException(StorageErrorCode.UNCLASSIFIED,
                new IllegalStateException("_sync_column_versions: " + why));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ColumnVersions c && Arrays.equals(toBytes(), c.toBytes());
    }

    @Override
    public int hashCode() { return Arrays.hashCode(toBytes()); }

    @Override
    public String toString() { return versions == null ? "ColumnVersions[none]" : "ColumnVersions" + Arrays.toString(versions); }
}
