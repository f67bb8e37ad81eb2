/**
 * Realtime (SPEC §8): WebSocket sessions, the fanout hub with a bounded outbox per connection, presence (§8.6) and
 * sync rounds over the socket (§8.7), fed by the storage's {@link syncular.jakarta.storage.CommitFeed} for local and
 * remote commits alike. No Jakarta imports: the {@code web} endpoint adapts a container socket to
 * {@link syncular.jakarta.realtime.SocketChannel}.
 */
package syncular.jakarta.realtime;
