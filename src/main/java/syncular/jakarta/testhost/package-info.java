/**
 * The conformance host: a documented test mode ({@code syncular.conformance-host=true}, off by default) through
 * which an external client test suite drives the server — reset, grants, resolver faults, a virtual clock, pruning,
 * stored-row reads — mirroring the upstream conformance {@code ServerDriver}. With the flag off every route here is
 * 404 and the actor header authenticates nobody. Never enable it in production.
 */
package syncular.jakarta.testhost;
