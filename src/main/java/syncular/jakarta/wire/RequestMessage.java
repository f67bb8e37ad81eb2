package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A decoded (or to-be-encoded) request: wire version and frames in wire order, END omitted (SPEC §1.5). The grammar
 * is checked by {@link RequestDecoder} and {@link RequestEncoder}, not here, so tests can build bad messages.
 */
public record RequestMessage(int wireVersion, List<RequestFrame> frames) {
    public RequestMessage {
        frames = Checks.list(frames, "request frames");
    }

    /** The REQ_HEADER (the first frame of a valid request). */
    public ReqHeader header() {
        if (frames.isEmpty() || !(frames.get(0) instanceof ReqHeader h)) throw new IllegalStateException("no REQ_HEADER first");
        return h;
    }

    public List<PushCommit> pushCommits() {
        List<PushCommit> out = new ArrayList<>();
        for (RequestFrame f : frames) if (f instanceof PushCommit p) out.add(p);
        return out;
    }

    public Optional<PullHeader> pullHeader() {
        for (RequestFrame f : frames) if (f instanceof PullHeader p) return Optional.of(p);
        return Optional.empty();
    }

    public List<Subscription> subscriptions() {
        List<Subscription> out = new ArrayList<>();
        for (RequestFrame f : frames) if (f instanceof Subscription s) out.add(s);
        return out;
    }
}
