package syncular.jakarta.bench.floor;

import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ResponseEncoder;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RespHeader;

/**
 * The floor's {@code POST /sync}: every push is answered applied, nothing stored (the database floor appends its body
 * to a table, {@link FloorDatabase}); and a readiness probe.
 */
@WebServlet(urlPatterns = {"/sync", "/health/ready"})
public class FloorServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final byte[] APPLIED = ResponseEncoder.encode(new ResponseMessage(1, List.of(
            RespHeader.v1(null, 1), new PushResult("floor", PushResult.Status.APPLIED, 1L, List.of()))));

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        byte[] body = req.getInputStream().readAllBytes();
        if (FloorDatabase.enabled()) FloorDatabase.append(body);
        resp.setContentType("application/vnd.syncular.sync");
        resp.setContentLength(APPLIED.length);
        resp.getOutputStream().write(APPLIED);
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        resp.setContentType("text/plain");
        resp.getWriter().write("ready");
    }
}
