package syncular.jakarta.console;

import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The console's read-only views over the server's tables through JPA (issue 20): partitions, clients with lag,
 * a partition's recent commits and their changes, one row's scopes, blob references and history, scope activity.
 * Answers JSON-ready maps. No transaction: each query reads committed data on its own (READ COMMITTED), and nothing
 * is ever written through this persistence unit.
 */
@Stateless
@TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
public class OperatorViews {
    /** The most rows one view answers. */
    public static final int MAX_LIMIT = 1000;

    @PersistenceContext(unitName = "syncular-console")
    EntityManager em;

    /** One partition's overview figures, before the caller adds what needs the storage (prune recommendation). */
    public record PartitionFigures(String partition, long maxCommitSeq, long horizonSeq, String logEpoch,
                                   Long lastAuthenticatedAtMs, long knownClients, long activeClients,
                                   Long lowestActiveCursor) {
        /** Commits kept in the log: the sequence is dense and pruned through the horizon. */
        public long retainedCommits() { return Math.max(0, maxCommitSeq - horizonSeq); }
    }

    /** Every partition with its log head, horizon, epoch and clients ({@code activeSinceMs}: "active" cut-off). */
    public List<PartitionFigures> partitions(long activeSinceMs) {
        Map<String, PartitionRegistration> registry = new HashMap<>();
        for (PartitionRegistration r : em.createQuery("SELECT r FROM PartitionRegistration r",
                PartitionRegistration.class).getResultList()) {
            registry.put(r.partition(), r);
        }
        Map<String, Long> known = new HashMap<>();
        for (Object[] row : em.createQuery("SELECT c.partition, COUNT(c) FROM ClientEntry c GROUP BY c.partition",
                Object[].class).getResultList()) {
            known.put((String) row[0], number(row[1]));
        }
        Map<String, Object[]> active = new HashMap<>();
        for (Object[] row : em.createQuery("SELECT c.partition, COUNT(c), MIN(c.cursor) FROM ClientEntry c "
                        + "WHERE c.updatedAtMs >= :since GROUP BY c.partition", Object[].class)
                .setParameter("since", activeSinceMs).getResultList()) {
            active.put((String) row[0], row);
        }
        List<PartitionFigures> out = new ArrayList<>();
        for (PartitionEntry p : em.createQuery("SELECT p FROM PartitionEntry p ORDER BY p.partition",
                PartitionEntry.class).getResultList()) {
            PartitionRegistration r = registry.get(p.partition());
            Object[] a = active.get(p.partition());
            out.add(new PartitionFigures(p.partition(), p.maxCommitSeq(), p.horizonSeq(),
                    r == null ? null : r.logEpoch(), r == null ? null : r.lastAuthenticatedAtMs(),
                    known.getOrDefault(p.partition(), 0L), a == null ? 0 : number(a[1]),
                    a == null || a[2] == null ? null : number(a[2])));
        }
        return out;
    }

    /** A partition's log head, or empty for an unknown partition. */
    public Optional<PartitionEntry> partition(String partition) {
        return Optional.ofNullable(em.find(PartitionEntry.class, partition));
    }

    /** The clients of a partition, furthest behind first. */
    public List<ClientEntry> clients(String partition, int limit) {
        return em.createQuery("SELECT c FROM ClientEntry c WHERE c.partition = :p ORDER BY c.cursor, c.clientId",
                ClientEntry.class).setParameter("p", partition).setMaxResults(limit).getResultList();
    }

    public Optional<ClientEntry> client(String partition, String clientId) {
        return em.createQuery("SELECT c FROM ClientEntry c WHERE c.partition = :p AND c.clientId = :id",
                ClientEntry.class).setParameter("p", partition).setParameter("id", clientId).getResultStream()
                .findFirst();
    }

    /** A commit with how many changes it made per table. */
    public record CommitSummary(CommitEntry commit, Map<String, Long> changesByTable) { }

    /** The newest commits of a partition below {@code beforeSeq} (exclusive), newest first. */
    public List<CommitSummary> commits(String partition, long beforeSeq, int limit) {
        List<CommitEntry> commits = em.createQuery("SELECT c FROM CommitEntry c WHERE c.partition = :p "
                        + "AND c.commitSeq < :before ORDER BY c.commitSeq DESC", CommitEntry.class)
                .setParameter("p", partition).setParameter("before", beforeSeq).setMaxResults(limit).getResultList();
        if (commits.isEmpty()) return List.of();
        long lo = commits.get(commits.size() - 1).commitSeq();
        long hi = commits.get(0).commitSeq();
        Map<Long, Map<String, Long>> counts = new HashMap<>();
        for (Object[] row : em.createQuery("SELECT ch.commitSeq, ch.table, COUNT(ch) FROM ChangeEntry ch "
                        + "WHERE ch.partition = :p AND ch.commitSeq BETWEEN :lo AND :hi "
                        + "GROUP BY ch.commitSeq, ch.table", Object[].class)
                .setParameter("p", partition).setParameter("lo", lo).setParameter("hi", hi).getResultList()) {
            counts.computeIfAbsent(number(row[0]), k -> new LinkedHashMap<>()).put((String) row[1], number(row[2]));
        }
        List<CommitSummary> out = new ArrayList<>();
        for (CommitEntry c : commits) out.add(new CommitSummary(c, counts.getOrDefault(c.commitSeq(), Map.of())));
        return out;
    }

    public Optional<CommitEntry> commit(String partition, long commitSeq) {
        return em.createQuery("SELECT c FROM CommitEntry c WHERE c.partition = :p AND c.commitSeq = :s",
                CommitEntry.class).setParameter("p", partition).setParameter("s", commitSeq).getResultStream()
                .findFirst();
    }

    /** A commit's changes in order, at most {@code limit}. */
    public List<ChangeEntry> changes(String partition, long commitSeq, int limit) {
        return em.createQuery("SELECT ch FROM ChangeEntry ch WHERE ch.partition = :p AND ch.commitSeq = :s "
                        + "ORDER BY ch.idx", ChangeEntry.class)
                .setParameter("p", partition).setParameter("s", commitSeq).setMaxResults(limit).getResultList();
    }

    /** A row's retained history: its changes, newest first. */
    public List<ChangeEntry> rowHistory(String partition, String table, String rowId, int limit) {
        return em.createQuery("SELECT ch FROM ChangeEntry ch WHERE ch.partition = :p AND ch.table = :t "
                        + "AND ch.rowId = :r ORDER BY ch.commitSeq DESC", ChangeEntry.class)
                .setParameter("p", partition).setParameter("t", table).setParameter("r", rowId)
                .setMaxResults(limit).getResultList();
    }

    /** A row's scope values (variable → value). */
    public Map<String, String> rowScopes(String partition, String table, String rowId) {
        Map<String, String> out = new java.util.TreeMap<>();
        for (RowScopeEntry s : em.createQuery("SELECT s FROM RowScopeEntry s WHERE s.partition = :p "
                        + "AND s.table = :t AND s.rowId = :r", RowScopeEntry.class)
                .setParameter("p", partition).setParameter("t", table).setParameter("r", rowId).getResultList()) {
            out.put(s.variable(), s.value());
        }
        return out;
    }

    /** The blobs a row references (§5.9). */
    public List<String> rowBlobs(String partition, String table, String rowId) {
        return em.createQuery("SELECT b.blobId FROM BlobRefEntry b WHERE b.partition = :p AND b.table = :t "
                        + "AND b.rowId = :r ORDER BY b.blobId", String.class)
                .setParameter("p", partition).setParameter("t", table).setParameter("r", rowId).getResultList();
    }

    /** How often a scope value was written: commits touching it in the retained log, and the newest one. */
    public record ScopeActivity(String table, String variable, String value, long commits, long lastCommitSeq) { }

    /** The scope values of a partition's retained log, most recently written first. */
    public List<ScopeActivity> scopeActivity(String partition, int limit) {
        List<ScopeActivity> out = new ArrayList<>();
        for (Object[] row : em.createQuery("SELECT s.table, s.variable, s.value, COUNT(s), "
                        + "MAX(s.commitSeq) AS lastSeq FROM ChangeScopeEntry s WHERE s.partition = :p "
                        + "GROUP BY s.table, s.variable, s.value ORDER BY lastSeq DESC", Object[].class)
                .setParameter("p", partition).setMaxResults(limit).getResultList()) {
            out.add(new ScopeActivity((String) row[0], (String) row[1], (String) row[2], number(row[3]),
                    number(row[4])));
        }
        return out;
    }

    /** The newest audited operator actions, newest first. */
    public List<AuditEntry> audit(int limit) {
        return em.createQuery("SELECT a FROM AuditEntry a ORDER BY a.id DESC", AuditEntry.class)
                .setMaxResults(limit).getResultList();
    }

    private static long number(Object o) { return ((Number) o).longValue(); }
}
