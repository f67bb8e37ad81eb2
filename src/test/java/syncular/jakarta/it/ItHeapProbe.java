package syncular.jakarta.it;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.util.Optional;

/**
 * Test-only resource: the server's heap while something streams through it. {@code start} collects garbage, notes the
 * old generation's usage and resets its peak, and samples the used heap every few milliseconds; {@code stop} reports
 * both peaks. The old generation is what tells streaming from buffering: a whole blob held in memory is one huge
 * array, which G1 (and the serial and parallel collectors) allocate there directly, while streamed chunks die young.
 */
@Path("it-heap")
@Produces(MediaType.APPLICATION_JSON)
public class ItHeapProbe {
    private static volatile Thread sampler;
    private static volatile long sampledPeak;
    private static volatile long oldBaseline;

    private static Optional<MemoryPoolMXBean> oldGen() {
        return ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getName().contains("Old Gen") || p.getName().contains("Tenured")).findFirst();
    }

    @POST
    @Path("start")
    public synchronized String start() {
        System.gc();
        oldBaseline = oldGen().map(p -> p.getUsage().getUsed()).orElse(-1L);
        oldGen().ifPresent(MemoryPoolMXBean::resetPeakUsage);
        sampledPeak = 0;
        Thread t = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                sampledPeak = Math.max(sampledPeak, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "it-heap-sampler");
        t.setDaemon(true);
        t.start();
        sampler = t;
        return "{}";
    }

    @POST
    @Path("stop")
    public synchronized String stop() throws InterruptedException {
        Thread t = sampler;
        if (t != null) {
            t.interrupt();
            t.join();
        }
        long oldPeak = oldGen().map(p -> p.getPeakUsage().getUsed()).orElse(-1L);
        String pool = oldGen().map(MemoryPoolMXBean::getName).orElse("");
        return "{\"pool\":\"" + pool + "\",\"oldBaseline\":" + oldBaseline + ",\"oldPeak\":" + oldPeak
                + ",\"sampledPeak\":" + sampledPeak + ",\"max\":" + Runtime.getRuntime().maxMemory() + "}";
    }
}
