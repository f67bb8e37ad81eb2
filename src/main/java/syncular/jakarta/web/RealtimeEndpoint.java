package syncular.jakarta.web;

import jakarta.enterprise.inject.spi.CDI;
import jakarta.websocket.CloseReason;
import jakarta.websocket.EndpointConfig;
import jakarta.websocket.HandshakeResponse;
import jakarta.websocket.OnClose;
import jakarta.websocket.OnError;
import jakarta.websocket.OnMessage;
import jakarta.websocket.OnOpen;
import jakarta.websocket.PongMessage;
import jakarta.websocket.Session;
import jakarta.websocket.server.HandshakeRequest;
import jakarta.websocket.server.ServerEndpoint;
import jakarta.websocket.server.ServerEndpointConfig;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import syncular.jakarta.host.Credentials;
import syncular.jakarta.realtime.RealtimeSession;
import syncular.jakarta.realtime.RealtimeSettings;
import syncular.jakarta.realtime.SocketChannel;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/**
 * {@code GET /realtime?clientId=…} (SPEC §8), thin: authentication at open through the same Authenticator as
 * {@code POST /sync} (a refusal closes with 1008 and the catalog code as reason; a full server closes 1013
 * {@code sync.websocket_connection_limit}), then every frame goes to the session in {@code realtime}. The message
 * size cap comes from {@code syncular.realtime.max-message-bytes}, set per session here because annotation values
 * are compile-time constants and the containers' defaults differ.
 *
 * <p>The credentials a session authenticates with are the ones its own upgrade request carried: {@link Handshake}
 * snapshots that request's headers and query parameters into the handshake's user properties, which Jakarta
 * WebSocket 2.1 (issue 235) makes a per-session copy, and {@link #open} reads them from {@link Session}'s user
 * properties. Nothing is shared between handshakes.
 */
@ServerEndpoint(value = "/realtime", configurator = RealtimeEndpoint.Handshake.class,
        subprotocols = RealtimeEndpoint.Handshake.SUBPROTOCOL)
public class RealtimeEndpoint {
    private static final System.Logger LOG = System.getLogger(RealtimeEndpoint.class.getName());
    private static final String SESSION = "syncular.realtime.session";
    private static final String MAX_BYTES = "syncular.realtime.max-message-bytes";

    /** The service, handed over by {@link Handshake#getEndpointInstance}; null: looked up at open. */
    private final RealtimeService service;

    /** For a container that instantiates the endpoint itself (ours come from {@link Handshake}). */
    public RealtimeEndpoint() { this(null); }

    RealtimeEndpoint(RealtimeService service) { this.service = service; }

    @OnOpen
    public void open(Session socket, EndpointConfig config) {
        Object snapshot = socket.getUserProperties().remove(Handshake.UPGRADE);
        Handshake.Upgrade upgrade = snapshot instanceof Handshake.Upgrade u ? u : Handshake.Upgrade.NONE;
        RealtimeService service = this.service != null ? this.service : Handshake.lookupService();
        RealtimeSettings settings = service.settings();
        socket.setMaxBinaryMessageBufferSize(settings.maxMessageBytes());
        socket.setMaxTextMessageBufferSize(settings.maxMessageBytes());
        socket.getUserProperties().put(MAX_BYTES, settings.maxMessageBytes());
        // the hub's idle timeout (syncular.realtime.idle-timeout-ms) counts pongs, which the containers' does not
        socket.setMaxIdleTimeout(0);
        Credentials credentials = upgrade.credentials(service.tokenCarriers());
        String clientId = credentials.queryParameter("clientId").orElse("");
        // the slot exists before the hello is sent: a client may answer the hello at once, and the container may
        // deliver that message on another thread before connect() has returned here
        Slot<RealtimeSession> slot = new Slot<>(() -> close(socket, CloseReason.CloseCodes.PROTOCOL_ERROR,
                "too many messages before the hello"), RealtimeSession::closed, service::later);
        socket.getUserProperties().put(SESSION, slot);
        try {
            slot.attach(service.connect(credentials, clientId, new Channel(socket)));
        } catch (SyncException e) {
            // a full server or actor: come back later (1013); anything else refused is a policy matter (1008)
            close(socket, e.code() == ErrorCode.SYNC_WEBSOCKET_CONNECTION_LIMIT ? CloseReason.CloseCodes.TRY_AGAIN_LATER
                    : CloseReason.CloseCodes.VIOLATED_POLICY, e.code().wire());
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
            slot(socket).ifPresent(s -> s.closed(CloseReason.CloseCodes.TOO_BIG.getCode()));
            close(socket, CloseReason.CloseCodes.TOO_BIG, "message too big");
            return true;
        }
        return false;
    }

    /** A pong answers the ping sent with each heartbeat: the peer is alive (the idle timeout). */
    @OnMessage
    public void pong(Session socket, PongMessage pong) {
        slot(socket).ifPresent(s -> s.dispatch(RealtimeSession::onPong));
    }

    /**
     * A container may report the close from inside one of our own calls into it: Grizzly (Payara) does when a send
     * finds the connection gone, on the sending thread. That thread may hold the session's lock (a delta under it)
     * or the hub's presence lock (a presence fanout), which unregistering takes in the other order: a node's
     * realtime deadlocked so under a reconnect storm. Such a close is handled on another thread.
     */
    @OnClose
    public void closed(Session socket, CloseReason reason) {
        int code = reason.getCloseCode().getCode();
        slot(socket).ifPresent(s -> s.reported(code, Channel.calling()));
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
        private final java.util.function.ObjIntConsumer<S> onClosed;
        private final java.util.concurrent.Executor later;
        private int closeCode;
        private S session;
        private java.util.ArrayDeque<Consumer<S>> early = new java.util.ArrayDeque<>();
        private boolean closed;

        /** {@code later}: where a close reported from inside one of our own calls is handled (see closed()). */
        Slot(Runnable overflow, java.util.function.ObjIntConsumer<S> onClosed, java.util.concurrent.Executor later) {
            this.overflow = overflow;
            this.onClosed = onClosed;
            this.later = later;
        }

        synchronized void attach(S attached) {
            if (closed) {
                onClosed.accept(attached, closeCode);
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

        synchronized void closed(int code) {
            closed = true;
            closeCode = code;
            if (session != null) onClosed.accept(session, code);
        }

        /** The container reports the socket closed; {@code reentrant}: from inside one of our calls into it. */
        void reported(int code, boolean reentrant) {
            if (reentrant) {
                later.execute(() -> closed(code));
            } else {
                closed(code);
            }
        }
    }

    static void close(Session socket, CloseReason.CloseCode code, String reason) {
        try {
            socket.close(new CloseReason(code, reason));
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.DEBUG, "closing a realtime socket failed", e);
        }
    }

    /**
     * The container socket behind a session: async sends, one at a time (the Outbox guarantees that). Each call into
     * the container is marked on its thread, so a close the container reports from inside it is recognized
     * ({@link #closed}).
     */
    static final class Channel implements SocketChannel {
        /** How deep this thread is in calls of ours into the container. */
        private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);
        private final Session socket;

        Channel(Session socket) { this.socket = socket; }

        /** Whether this thread is inside one of our calls into the container. */
        static boolean calling() { return DEPTH.get()[0] > 0; }

        private static void call(Runnable call) {
            int[] depth = DEPTH.get();
            depth[0]++;
            try {
                call.run();
            } finally {
                depth[0]--;
            }
        }

        @Override
        public void sendText(String text, Consumer<Throwable> done) {
            call(() -> socket.getAsyncRemote().sendText(text, r -> done.accept(r.isOK() ? null : r.getException())));
        }

        @Override
        public void sendBinary(ByteBuffer data, Consumer<Throwable> done) {
            call(() -> socket.getAsyncRemote().sendBinary(data,
                    r -> done.accept(r.isOK() ? null : r.getException())));
        }

        @Override
        public void sendPing(Consumer<Throwable> done) {
            Throwable[] failure = new Throwable[1];
            call(() -> {
                try {
                    socket.getAsyncRemote().sendPing(ByteBuffer.allocate(0));
                } catch (IOException | RuntimeException e) {
                    failure[0] = e;
                }
            });
            done.accept(failure[0]);
        }

        @Override
        public void close(int code, String reason) {
            call(() -> RealtimeEndpoint.close(socket, CloseReason.CloseCodes.getCloseCode(code), reason));
        }
    }

    /**
     * The upgrade request's side of a session. {@link #modifyHandshake} snapshots the request's headers and query
     * parameters into the user properties of that one handshake (a per-session copy, Jakarta WebSocket 2.1), so a
     * session authenticates with what its own upgrade carried and never with another's. Also checks the
     * {@code Origin} of browser upgrades against {@code syncular.cors.allowed-origins} (refused: 403), and answers
     * the {@value #SUBPROTOCOL} subprotocol a browser offers beside its token.
     */
    public static class Handshake extends ServerEndpointConfig.Configurator {
        /** The subprotocol a browser offers (and the server selects) beside {@value #TOKEN_PREFIX}{@code <token>}. */
        public static final String SUBPROTOCOL = "syncular";
        /** A {@code Sec-WebSocket-Protocol} value carrying a bearer token: this prefix, then the token. */
        public static final String TOKEN_PREFIX = "syncular.bearer.";
        /** The query parameter carrying a bearer token (RFC 6750 §2.3), when enabled. */
        public static final String TOKEN_QUERY = "access_token";
        static final String UPGRADE = "syncular.realtime.upgrade";
        private volatile Set<String> origins;
        /** The application-scoped service (a client proxy), looked up once per deployment. */
        private volatile RealtimeService service;

        static RealtimeService lookupService() { return CDI.current().select(RealtimeService.class).get(); }

        /** What one upgrade request carried: headers (case-insensitive) and query parameters. */
        record Upgrade(Map<String, List<String>> headers, Map<String, List<String>> params) {
            static final Upgrade NONE = new Upgrade(Map.of(), Map.of());

            /** The credentials of this upgrade, with a bearer token taken from the enabled carriers only. */
            Credentials credentials(Set<SyncularConfig.WebSocketToken> carriers) {
                Optional<String> token = token(carriers);
                return new Credentials() {
                    @Override
                    public Optional<String> header(String name) {
                        if (name.equalsIgnoreCase("Authorization")) return token.map(t -> "Bearer " + t);
                        return first(headers, name);
                    }

                    @Override
                    public Optional<String> queryParameter(String name) { return first(params, name); }
                };
            }

            /** The bearer token: the Authorization header, else a subprotocol value, else the query, as enabled. */
            Optional<String> token(Set<SyncularConfig.WebSocketToken> carriers) {
                if (carriers.contains(SyncularConfig.WebSocketToken.HEADER)) {
                    Optional<String> header = first(headers, "Authorization");
                    if (header.isPresent()) return bearer(header.get());
                }
                if (carriers.contains(SyncularConfig.WebSocketToken.PROTOCOL)) {
                    for (String p : protocols(headers)) {
                        if (p.startsWith(TOKEN_PREFIX) && p.length() > TOKEN_PREFIX.length()) {
                            return Optional.of(p.substring(TOKEN_PREFIX.length()));
                        }
                    }
                }
                if (carriers.contains(SyncularConfig.WebSocketToken.QUERY)) {
                    return first(params, TOKEN_QUERY).filter(t -> !t.isEmpty());
                }
                return Optional.empty();
            }

            private static Optional<String> bearer(String header) {
                String h = header.trim();
                if (!h.regionMatches(true, 0, "Bearer ", 0, 7)) return Optional.empty();
                String t = h.substring(7).trim();
                return t.isEmpty() ? Optional.empty() : Optional.of(t);
            }

            private static Optional<String> first(Map<String, List<String>> m, String name) {
                List<String> v = m.get(name);
                return v == null || v.isEmpty() ? Optional.empty() : Optional.ofNullable(v.get(0));
            }
        }

        /** Every value of the request's {@code Sec-WebSocket-Protocol} header(s), split at commas. */
        static List<String> protocols(Map<String, List<String>> headers) {
            List<String> out = new ArrayList<>();
            for (String v : headers.getOrDefault(HandshakeRequest.SEC_WEBSOCKET_PROTOCOL, List.of())) {
                for (String p : v.split(",")) if (!p.isBlank()) out.add(p.trim());
            }
            return out;
        }

        @Override
        public void modifyHandshake(ServerEndpointConfig sec, HandshakeRequest request, HandshakeResponse response) {
            Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            headers.putAll(request.getHeaders());
            Map<String, List<String>> params = new LinkedHashMap<>();
            request.getParameterMap().forEach((k, v) -> params.put(k, List.copyOf(v)));
            sec.getUserProperties().put(UPGRADE, new Upgrade(java.util.Collections.unmodifiableMap(headers),
                    Map.copyOf(params)));
        }

        /**
         * RFC 6455 §4.2.2: the server selects one of the offered subprotocols. A browser sending its token as a
         * subprotocol offers {@value #SUBPROTOCOL} beside it, and that is what is answered — never the token, and
         * nothing at all for a client that offered no {@value #SUBPROTOCOL}.
         */
        @Override
        public String getNegotiatedSubprotocol(List<String> supported, List<String> requested) {
            for (String r : requested) {
                for (String p : r.split(",")) if (p.trim().equals(SUBPROTOCOL)) return SUBPROTOCOL;
            }
            return "";
        }

        /**
         * Browsers send {@code Origin}; other clients do not (allowed). A browser's origin must be listed in
         * {@code syncular.cors.allowed-origins} (or the list be {@code *}); otherwise the container answers 403.
         */
        @Override
        public boolean checkOrigin(String originHeaderValue) {
            if (originHeaderValue == null) return true;   // not a browser; no configuration to read
            Set<String> allowed = origins;
            if (allowed == null) {
                allowed = CorsFilter.configuredOrigins();
                origins = allowed;
            }
            return CorsFilter.allowsUpgrade(allowed, originHeaderValue);
        }

        /**
         * A plain instance per socket, handed the service looked up once. The endpoint injects nothing, and the
         * containers' default makes each one a CDI-managed object: on Payara a Weld injection target per upgrade,
         * serialized on the bean manager, and a bean lookup per open (docs/benchmarks.md, "Reconnect storm").
         */
        @Override
        public <T> T getEndpointInstance(Class<T> endpointClass) throws InstantiationException {
            if (endpointClass != RealtimeEndpoint.class) return super.getEndpointInstance(endpointClass);
            RealtimeService s = service;
            if (s == null) service = s = lookupService();
            return endpointClass.cast(new RealtimeEndpoint(s));
        }
    }
}
