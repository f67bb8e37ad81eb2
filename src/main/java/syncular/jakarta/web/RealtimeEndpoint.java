package syncular.jakarta.web;

import jakarta.enterprise.inject.spi.CDI;
import jakarta.websocket.CloseReason;
import jakarta.websocket.EndpointConfig;
import jakarta.websocket.HandshakeResponse;
import jakarta.websocket.OnClose;
import jakarta.websocket.OnError;
import jakarta.websocket.OnMessage;
import jakarta.websocket.OnOpen;
import jakarta.websocket.Session;
import jakarta.websocket.server.HandshakeRequest;
import jakarta.websocket.server.ServerEndpoint;
import jakarta.websocket.server.ServerEndpointConfig;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.function.Consumer;
import syncular.jakarta.host.Credentials;
import syncular.jakarta.realtime.RealtimeSession;
import syncular.jakarta.realtime.RealtimeSettings;
import syncular.jakarta.realtime.SocketChannel;
import syncular.jakarta.sync.SyncException;

/**
 * {@code GET /realtime?clientId=…} (SPEC §8), thin: authentication at open through the same Authenticator as
 * {@code POST /sync} (a refusal closes with 1008 and the catalog code as reason), then every frame goes to the
 * session in {@code realtime}. The message size cap comes from {@code syncular.realtime.max-message-bytes}, set per
 * session here because annotation values are compile-time constants and the containers' defaults differ.
 */
@ServerEndpoint(value = "/realtime", configurator = RealtimeEndpoint.Handshake.class)
public class RealtimeEndpoint {
    private static final System.Logger LOG = System.getLogger(RealtimeEndpoint.class.getName());
    private static final String SESSION = "syncular.realtime.session";
    private static final String MAX_BYTES = "syncular.realtime.max-message-bytes";

    @OnOpen
    public void open(Session socket, EndpointConfig config) {
        Map<String, List<String>> headers = Handshake.take(socket.getQueryString());
        RealtimeService service = CDI.current().select(RealtimeService.class).get();
        RealtimeSettings settings = service.settings();
        socket.setMaxBinaryMessageBufferSize(settings.maxMessageBytes());
        socket.setMaxTextMessageBufferSize(settings.maxMessageBytes());
        socket.getUserProperties().put(MAX_BYTES, settings.maxMessageBytes());
        // the socket is only ever idle for a heartbeat period; leave the container's idle timeout out of it
        socket.setMaxIdleTimeout(0);
        Map<String, List<String>> params = socket.getRequestParameterMap();
        Credentials credentials = new Credentials() {
            @Override
            public Optional<String> header(String name) {
                List<String> v = headers.get(name);
                return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v.get(0));
            }

            @Override
            public Optional<String> queryParameter(String name) {
                List<String> v = params.get(name);
                return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v.get(0));
            }
        };
        String clientId = credentials.queryParameter("clientId").orElse("");
        // the slot exists before the hello is sent: a client may answer the hello at once, and the container may
        // deliver that message on another thread before connect() has returned here
        Slot<RealtimeSession> slot = new Slot<>(() -> close(socket, CloseReason.CloseCodes.PROTOCOL_ERROR,
                "too many messages before the hello"), RealtimeSession::closed);
        socket.getUserProperties().put(SESSION, slot);
        try {
            slot.attach(service.connect(credentials, clientId, new Channel(socket)));
        } catch (SyncException e) {
            close(socket, CloseReason.CloseCodes.VIOLATED_POLICY, e.code().wire());
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "opening a realtime session failed", e);
            close(socket, CloseReason.CloseCodes.UNEXPECTED_CONDITION, "sync.internal_error");
        }
    }

    @OnMessage
    public void text(Session socket, String text) {
        if (tooBig(socket, text.length())) return;
        slot(socket).ifPresent(s -> s.dispatch(session -> session.onText(text)));
    }

    @OnMessage
    public void binary(Session socket, byte[] frame) {
        if (tooBig(socket, frame.length)) return;
        slot(socket).ifPresent(s -> s.dispatch(session -> session.onBinary(frame)));
    }

    /**
     * The cap checked here as well: a container may keep a larger incoming buffer than the session's setting (Tyrus
     * sizes its buffer by its own property), and a message over the configured cap must never reach the protocol.
     */
    private static boolean tooBig(Session socket, int length) {
        Object max = socket.getUserProperties().get(MAX_BYTES);
        if (max instanceof Integer m && length > m) {
            slot(socket).ifPresent(Slot::closed);
            close(socket, CloseReason.CloseCodes.TOO_BIG, "message too big");
            return true;
        }
        return false;
    }

    @OnClose
    public void closed(Session socket, CloseReason reason) {
        slot(socket).ifPresent(Slot::closed);
    }

    @OnError
    public void error(Session socket, Throwable failure) {
        // too-big messages, resets: the container closes the socket next and @OnClose unregisters
        LOG.log(Level.DEBUG, "realtime socket error", failure);
    }

    @SuppressWarnings("unchecked")
    private static Optional<Slot<RealtimeSession>> slot(Session socket) {
        return Optional.ofNullable((Slot<RealtimeSession>) socket.getUserProperties().get(SESSION));
    }

    /**
     * The socket's session once authentication and the hello are done; messages that arrive before that are kept
     * in order and handed over when the session attaches (processed, never dropped). Bounded: a client that sends
     * more than {@link #EARLY_MESSAGES} messages before its hello can have arrived is broken and is closed.
     */
    static final class Slot<S> {
        static final int EARLY_MESSAGES = 64;
        private final Runnable overflow;
        private final Consumer<S> onClosed;
        private S session;
        private java.util.ArrayDeque<Consumer<S>> early = new java.util.ArrayDeque<>();
        private boolean closed;

        Slot(Runnable overflow, Consumer<S> onClosed) {
            this.overflow = overflow;
            this.onClosed = onClosed;
        }

        synchronized void attach(S attached) {
            if (closed) {
                onClosed.accept(attached);
                return;
            }
            for (Consumer<S> message : early) message.accept(attached);
            early = null;
            session = attached;
        }

        synchronized void dispatch(Consumer<S> message) {
            if (closed) return;
            if (session != null) {
                message.accept(session);
            } else if (early.size() < EARLY_MESSAGES) {
                early.add(message);
            } else {
                closed = true;
                overflow.run();
            }
        }

        synchronized void closed() {
            closed = true;
            if (session != null) onClosed.accept(session);
        }
    }

    static void close(Session socket, CloseReason.CloseCode code, String reason) {
        try {
            socket.close(new CloseReason(code, reason));
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.DEBUG, "closing a realtime socket failed", e);
        }
    }

    /** The container socket behind a session: async sends, one at a time (the Outbox guarantees that). */
    static final class Channel implements SocketChannel {
        /**
         * The context class loader a send runs under. Payara's Tyrus reschedules the session's idle-timeout task
         * on the managed scheduler at every send, and capturing the managed context for that task looks up
         * Jakarta Concurrency context providers with a ServiceLoader over the thread's context class loader — a
         * scan of every jar of the application and the server, per message: 54 % of the server's CPU samples at
         * 10,000 deltas/s (docs/benchmarks.md). Tyrus' internal timeout task needs no application context, so a
         * send runs under the platform class loader, where that lookup is a few map reads. Undertow (WildFly) is
         * unaffected either way.
         */
        private static final ClassLoader SEND_LOADER = ClassLoader.getPlatformClassLoader();
        private final Session socket;

        Channel(Session socket) { this.socket = socket; }

        @Override
        public void sendText(String text, Consumer<Throwable> done) {
            underSendLoader(() -> socket.getAsyncRemote().sendText(text,
                    r -> done.accept(r.isOK() ? null : r.getException())));
        }

        @Override
        public void sendBinary(ByteBuffer data, Consumer<Throwable> done) {
            underSendLoader(() -> socket.getAsyncRemote().sendBinary(data,
                    r -> done.accept(r.isOK() ? null : r.getException())));
        }

        private static void underSendLoader(Runnable send) {
            Thread t = Thread.currentThread();
            ClassLoader before = t.getContextClassLoader();
            t.setContextClassLoader(SEND_LOADER);
            try {
                send.run();
            } finally {
                t.setContextClassLoader(before);
            }
        }

        @Override
        public void close(int code, String reason) {
            RealtimeEndpoint.close(socket, CloseReason.CloseCodes.getCloseCode(code), reason);
        }
    }

    /**
     * Carries the upgrade request's headers to {@link #open} (jakarta.websocket gives a session no headers). The
     * endpoint config's user properties are shared between concurrent handshakes on some containers, so headers are
     * parked here by query string (which holds the clientId) and taken by the session that opens with it; entries
     * of handshakes that never opened expire.
     */
    public static class Handshake extends ServerEndpointConfig.Configurator {
        private static final long EXPIRY_NANOS = 60_000_000_000L;
        private static final Map<String, ConcurrentLinkedDeque<Parked>> PARKED = new ConcurrentHashMap<>();

        private record Parked(long atNanos, Map<String, List<String>> headers) { }

        @Override
        public void modifyHandshake(ServerEndpointConfig sec, HandshakeRequest request, HandshakeResponse response) {
            Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            headers.putAll(request.getHeaders());
            long now = System.nanoTime();
            PARKED.values().forEach(q -> q.removeIf(p -> now - p.atNanos > EXPIRY_NANOS));
            PARKED.entrySet().removeIf(e -> e.getValue().isEmpty());
            PARKED.computeIfAbsent(key(request.getQueryString()), k -> new ConcurrentLinkedDeque<>())
                    .add(new Parked(now, headers));
        }

        static Map<String, List<String>> take(String queryString) {
            ConcurrentLinkedDeque<Parked> q = PARKED.get(key(queryString));
            Parked p = q == null ? null : q.pollFirst();
            return p == null ? Map.of() : p.headers();
        }

        private static String key(String queryString) { return queryString == null ? "" : queryString; }
    }
}
