package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.util.Objects;

/** A row's reference to a blob ({@code sync_blob_refs}, SPEC §5.9). */
@Entity
@Table(name = "sync_blob_refs")
@IdClass(BlobRefEntry.Key.class)
public class BlobRefEntry {
    @Id
    @Column(name = "partition")
    private String partition;
    @Id
    @Column(name = "tbl")
    private String table;
    @Id
    @Column(name = "row_id")
    private String rowId;
    @Id
    @Column(name = "blob_id")
    private String blobId;

    public String blobId() { return blobId; }

    /** The composite key. */
    public static class Key implements Serializable {
        private String partition;
        private String table;
        private String rowId;
        private String blobId;

        public Key() { }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(partition, k.partition) && Objects.equals(table, k.table)
                    && Objects.equals(rowId, k.rowId) && Objects.equals(blobId, k.blobId);
        }

        @Override
        public int hashCode() { return Objects.hash(partition, table, rowId, blobId); }
    }
}
