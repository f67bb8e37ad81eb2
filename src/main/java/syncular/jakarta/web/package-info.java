/**
 * The Jakarta EE edge: JAX-RS resources, the sync servlet, EJB/CDI wiring, timers, configuration and the DataSource.
 * Thin by design: a resource parses HTTP, calls one service, writes the answer; protocol rules live in {@code sync},
 * SQL in {@code storage.postgres}. {@code POST /sync}, which carries every client's traffic, is a plain servlet
 * ({@link syncular.jakarta.web.SyncServlet}): the JAX-RS runtime around it cost more CPU than the handler. Nothing
 * here depends on one application server at compile time; where one container needs help
 * ({@link syncular.jakarta.web.WebSocketTimeouts}: Tyrus' per-frame scheduling on Payara), the adaptation finds that
 * container at run time and leaves every other alone.
 */
package syncular.jakarta.web;
