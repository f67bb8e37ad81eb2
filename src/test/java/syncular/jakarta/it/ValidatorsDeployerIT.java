package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.enterprise.context.Dependent;
import java.net.URL;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.host.CommitValidator;
import syncular.jakarta.host.RowValidator;
import syncular.jakarta.host.ValidatedOperation;
import syncular.jakarta.host.ValidationContext;
import syncular.jakarta.host.ValidationRejection;
import syncular.jakarta.host.ValidationRow;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.PushResultDetails;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RejectionDetails;

/**
 * A deployer's own §6.7/§6.8 validator beans, dropped into the WAR, are discovered through CDI and run inside the
 * push transaction under JTA on both servers: the row validator's SQL read is bound to the partition and sees the
 * commit's earlier staged writes; the commit validator's scan sees the final candidate state; host codes and
 * details reach the client; an unexpected throw is {@code sync.constraint_violation}. Without the conformance flag
 * the validator control routes do not exist. The beans are top-level classes (below) so the WAR needs nothing else
 * of this file; {@code @Dependent}, a bean-defining annotation, needs no client proxy.
 */
@ExtendWith(ArquillianExtension.class)
class ValidatorsDeployerIT extends DatabaseIsolation {
    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("validators-deployer").addClasses(ListCapValidator.class,
                UniqueTitleValidator.class), Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", "it-validators",
                "syncular.auth.fixed.allowed-scopes", "*"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    /** Row ids are partition-wide, not per list: prefixed with the test's list so tests never share a row. */
    private static PushCommit.Operation todo(String list, String id, String title) {
        return PushCommit.Operation.upsert("todos", list + "-" + id, null,
                SyncTestClient.todo(list + "-" + id, list, title, false, 1));
    }

    private static PushResult result(ResponseMessage m) {
        return (PushResult) m.frames().stream().filter(f -> f instanceof PushResult).findFirst().orElseThrow();
    }

    @Test
    void theRowValidatorsSqlReadSeesStagedWritesOfThisPartitionOnly() throws Exception {
        String list = "cap-" + UUID.randomUUID();
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-" + list, list);
        // four inserts in one commit: the fourth sees the three staged before it
        ResponseMessage r = a.round(List.of(new PushCommit("c1", List.of(todo(list, "1", "a"), todo(list, "2", "b"),
                todo(list, "3", "c"), todo(list, "4", "d")))));
        PushResult rejected = result(r);
        assertEquals(PushResult.Status.REJECTED, rejected.status());
        PushResult.OpError e = (PushResult.OpError) rejected.results().get(0);
        assertEquals(3, e.opIndex());
        assertEquals("it.list_full", e.code());
        PushResultDetails d = (PushResultDetails) r.frames().stream().filter(f -> f instanceof PushResultDetails)
                .findFirst().orElseThrow();
        assertEquals("{\"reason\":\"list_full\",\"references\":{\"limit\":\"3\"}}", d.entries().get(0).details().toJson());
        assertTrue(a.snapshot().isEmpty(), "the whole commit rolled back");

        assertEquals(PushResult.Status.APPLIED, result(a.round(List.of(new PushCommit("c2",
                List.of(todo(list, "1", "a"), todo(list, "2", "b"), todo(list, "3", "c")))))).status());
        assertEquals(PushResult.Status.APPLIED, result(a.round(List.of(new PushCommit("c3",
                List.of(todo(list, "2", "b2")))))).status(), "an update is not capped");
        assertEquals(3, a.snapshot().size());
    }

    @Test
    void theCommitValidatorScansTheFinalCandidateState() throws Exception {
        String list = "uniq-" + UUID.randomUUID();
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-" + list, list);
        assertEquals(PushResult.Status.APPLIED, result(a.round(List.of(new PushCommit("u1",
                List.of(todo(list, "1", "same")))))).status());
        // the duplicate exists only in the candidate state: a sibling of the same commit
        PushResult dup = result(a.round(List.of(new PushCommit("u2", List.of(todo(list, "1", "other"),
                todo(list, "2", "x"), todo(list, "3", "x"))))));
        assertEquals(PushResult.Status.REJECTED, dup.status());
        assertEquals("it.duplicate_title", ((PushResult.OpError) dup.results().get(0)).code());
        assertEquals(0, dup.results().get(0).opIndex(), "the first operation whose list holds the duplicate");
        assertEquals(List.of(list + "-1@1:same"), a.snapshot());
    }

    @Test
    void anUnexpectedThrowIsAConstraintViolationAndTheControlRoutesAreAbsent() throws Exception {
        String list = "boom-" + UUID.randomUUID();
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-" + list, list);
        PushResult r = result(a.round(List.of(new PushCommit("b1", List.of(todo(list, "1", "boom"))))));
        assertEquals(PushResult.Status.REJECTED, r.status());
        assertEquals("sync.constraint_violation", ((PushResult.OpError) r.results().get(0)).code());
        assertEquals(404, It.postBody(base.toURI().resolve("__conformance/validators"), "application/json", "[]")
                .statusCode());
        assertEquals(404, It.postBody(base.toURI().resolve("__conformance/commit-validator"), "application/json", "{}")
                .statusCode());
    }
}

/** At most three todos per list, counted with SQL on the push transaction; "boom" is a validator bug. */
@Dependent
class ListCapValidator implements RowValidator {
    @Override public boolean handles(String table) { return table.equals("todos"); }

    @Override
    public void validate(ValidatedOperation op, ValidationContext ctx) {
        if (op.row() == null) return;
        if ("boom".equals(op.row().get("title"))) throw new IllegalStateException("validator bug");
        if (op.stored() != null) return;
        List<Map<String, Object>> n = ctx.query("SELECT count(*) AS n FROM todos WHERE list_id = ?",
                List.of(op.row().get("list_id")));
        if ((Long) n.get(0).get("n") >= 3) {
            throw new ValidationRejection("it.list_full", "a list holds at most three todos",
                    new RejectionDetails(null, "list_full", null, Map.of("limit", "3")));
        }
    }
}

/** No two todos of a list share a title, checked on the commit's final candidate state. */
@Dependent
class UniqueTitleValidator implements CommitValidator {
    @Override
    public void validate(Commit commit, ValidationContext ctx) {
        for (ValidatedOperation op : commit.operations()) {
            if (op.row() == null) continue;
            Set<Object> titles = new HashSet<>();
            for (ValidationRow r : ctx.scanRows("todos", Map.of("list_id", List.of((String) op.row().get("list_id"))),
                    null, 1000)) {
                if (!titles.add(r.get("title"))) {
                    throw ValidationRejection.ofOperation(op.opIndex(), "it.duplicate_title",
                            "titles are unique within a list", new RejectionDetails(List.of("title"), null, null, null));
                }
            }
        }
    }
}
