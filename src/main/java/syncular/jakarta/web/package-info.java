/**
 * The Jakarta EE edge: JAX-RS resources, EJB/CDI wiring, timers, configuration and the DataSource. Thin by design:
 * a resource parses HTTP, calls one service, writes the answer; protocol rules live in {@code sync}, SQL in
 * {@code storage.postgres}. Nothing here may be specific to one application server.
 */
package syncular.jakarta.web;
