/**
 * The operational seam (issue 20): typed server events, emitted fire-and-forget by every layer above this one and
 * consumed by the node's {@link syncular.jakarta.events.EventBus} (a bounded ring, live tails, metrics). Plain Java,
 * no Jakarta EE: an emitter never waits on or fails because of a consumer. Outside the wire protocol.
 */
package syncular.jakarta.events;
