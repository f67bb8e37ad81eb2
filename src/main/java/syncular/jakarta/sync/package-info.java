/**
 * The protocol engine (SPEC §3–§6, seeds/002 handler.js): request validation in the reference order, push with
 * idempotency and conflicts, pull (incremental, bootstrap, horizon reset), the serve gate, the response build.
 * Plain Java over the {@code storage} contract and the {@code host} SPI: no Jakarta EE, no SQL.
 */
package syncular.jakarta.sync;
