package syncular.jakarta.events;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The node's most recent events, in a fixed number of slots (the oldest is overwritten): what the console shows
 * first, and where a live tail resumes from after a reconnect ({@code Last-Event-ID}). Each event gets the node's
 * next sequence number, starting at 1; sequence numbers are not shared across nodes or restarts.
 */
public final class EventRing {
    /** An event and its sequence number on this node. */
    public record Sequenced(long seq, ServerEvent event) { }

    private final Sequenced[] slots;
    private long next = 1;

    public EventRing(int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("an event ring holds at least one event");
        this.slots = new Sequenced[capacity];
    }

    public int capacity() { return slots.length; }

    /** Records {@code event}; answers it with its sequence number. */
    public synchronized Sequenced append(ServerEvent event) {
        Sequenced s = new Sequenced(next++, event);
        slots[(int) (s.seq() % slots.length)] = s;
        return s;
    }

    /** The sequence number the next event gets. */
    public synchronized long nextSeq() { return next; }

    /**
     * The retained events after {@code afterSeq} that {@code filter} accepts, oldest first, at most {@code limit}
     * of them: the newest ones when more match (a console asks for "the last 100 pushes").
     */
    public synchronized List<Sequenced> after(long afterSeq, int limit, Predicate<ServerEvent> filter) {
        long first = Math.max(afterSeq + 1, next - slots.length);
        List<Sequenced> out = new ArrayList<>();
        for (long seq = next - 1; seq >= first && out.size() < limit; seq--) {
            Sequenced s = slots[(int) (seq % slots.length)];
            if (filter.test(s.event())) out.add(s);
        }
        java.util.Collections.reverse(out);
        return out;
    }
}
