package syncular.jakarta.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The stored per-column versions (WIRE3-DELTA §3): format and the reference's reading rules. */
class ColumnVersionsTest {
    @Test
    void noBlobReadsEveryColumnAtTheRowVersion() {
        assertEquals(7, ColumnVersions.NONE.of(0, 7));
        assertEquals(7, ColumnVersions.NONE.of(5, 7));
        assertNull(ColumnVersions.NONE.toBytes());
        assertEquals(ColumnVersions.NONE, ColumnVersions.fromBytes(null));
    }

    @Test
    void aBlobListsOnlyVersionsAboveOneAsAscendingVarintPairs() {
        // row at version 1 (no blob), write moves column 2 to version 2 and keeps the rest at 1
        ColumnVersions v = ColumnVersions.NONE.written(4, 1, new boolean[] {false, false, true, false}, 2);
        assertArrayEquals(new byte[] {2, 2}, v.toBytes());
        assertEquals(2, v.of(2, 2));
        assertEquals(1, v.of(0, 2));
        assertEquals(1, v.of(9, 2), "past the listed ordinals: 1");
        // 300 needs two varint bytes: 0xAC 0x02
        ColumnVersions big = v.written(4, 2, new boolean[] {false, true, false, false}, 300);
        assertArrayEquals(new byte[] {1, (byte) 0xAC, 2, 2, 2}, big.toBytes());
        assertEquals(big, ColumnVersions.fromBytes(big.toBytes()));
        assertEquals(300, ColumnVersions.fromBytes(big.toBytes()).of(1, 300));
    }

    @Test
    void aWriteOverANoBlobRowKeepsTheUnwrittenColumnsAtTheOldRowVersion() {
        ColumnVersions v = ColumnVersions.NONE.written(3, 5, new boolean[] {false, true, false}, 6);
        assertEquals(5, v.of(0, 6));
        assertEquals(6, v.of(1, 6));
        assertEquals(5, v.of(2, 6));
    }

    @Test
    void theReferencesQuirksHold() {
        // an insert (no prior row) puts every column at 1: nothing above 1, so no blob
        assertEquals(ColumnVersions.NONE, ColumnVersions.NONE.written(3, 0, new boolean[] {true, true, true}, 1));
        // a primary-key-only write to a version-1 row moves nothing: no blob, so every column reads at version 2
        ColumnVersions pkOnly = ColumnVersions.NONE.written(3, 1, new boolean[] {false, false, false}, 2);
        assertEquals(ColumnVersions.NONE, pkOnly);
        assertEquals(2, pkOnly.of(1, 2));
    }

    @Test
    void aBlobThisFormatCannotHaveWrittenIsRefused() {
        assertEquals(StorageErrorCode.UNCLASSIFIED, assertThrows(StorageException.class,
                () -> ColumnVersions.fromBytes(new byte[] {1, (byte) 0x80})).code(), "truncated");
        assertEquals(StorageErrorCode.UNCLASSIFIED, assertThrows(StorageException.class,
                () -> ColumnVersions.fromBytes(new byte[] {3, 2, 1, 2})).code(), "descending");
    }
}
