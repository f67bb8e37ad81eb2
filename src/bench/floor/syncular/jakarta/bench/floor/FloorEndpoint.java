package syncular.jakarta.bench.floor;

import jakarta.websocket.OnMessage;
import jakarta.websocket.OnOpen;
import jakarta.websocket.Session;
import jakarta.websocket.server.ServerEndpoint;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import syncular.jakarta.wire.ResponseEncoder;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;

/**
 * The container's floor for a reconnect (issue 15): a WebSocket at the realtime path that answers as our server does
 * (hello on open, one round's response per binary message) but reads nothing and stores nothing. What the reconnect
 * storm measures against it is the cost of the container's upgrade and WebSocket stack alone. The database floor
 * ({@link FloorDatabase}) reads the log's newest commits once per round (the canned answer stays the same), the
 * two-trip floor its client's row at open as well.
 */
@ServerEndpoint("/realtime")
public class FloorEndpoint {
    static final String HELLO = "{\"type\":\"hello\",\"protocolVersion\":1,\"cursor\":0,\"latestSeq\":0}";
    private static final byte[] ROUND = round();

    private static byte[] round() {
        byte[] m = ResponseEncoder.encode(new ResponseMessage(1, List.of(RespHeader.v1(null, 1),
                SubStart.active("storm", Map.of("project_id", List.of("storm")), false), new SubEnd(0, null))));
        byte[] tagged = new byte[m.length + 1];
        tagged[0] = 0x01;
        System.arraycopy(m, 0, tagged, 1, m.length);
        return tagged;
    }

    @OnOpen
    public void open(Session session) {
        if (FloorDatabase.attaches()) FloorDatabase.readClient(clientId(session));
        session.getAsyncRemote().sendText(HELLO);
    }

    @OnMessage
    public void message(Session session, byte[] message) {
        if (FloorDatabase.attaches()) {
            FloorDatabase.storeCursorThenReadTail(clientId(session));
        } else if (FloorDatabase.enabled()) {
            FloorDatabase.readTail();
        }
        session.getAsyncRemote().sendBinary(ByteBuffer.wrap(ROUND));
    }

    private static String clientId(Session session) {
        List<String> ids = session.getRequestParameterMap().get("clientId");
        return ids == null || ids.isEmpty() ? "" : ids.get(0);
    }
}
