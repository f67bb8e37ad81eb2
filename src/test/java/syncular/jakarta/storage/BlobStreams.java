package syncular.jakarta.storage;

import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.security.MessageDigest;
import java.util.HexFormat;

/** What the blob store tests of every backend share: content addresses, generated bodies, a heap-peak sampler. */
public final class BlobStreams {
    private BlobStreams() { }

    public static String idOf(byte[] bytes) throws Exception {
        return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    /** {@code length} bytes of a deterministic sequence, never in memory at once. */
    public static InputStream generated(long length) {
        return new InputStream() {
            long at;

            @Override
            public int read() {
                return at < length ? (int) ((at++ * 31) & 0xff) : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (at >= length) return -1;
                int n = (int) Math.min(len, length - at);
                for (int i = 0; i < n; i++) b[off + i] = (byte) ((at++ * 31) & 0xff);
                return n;
            }
        };
    }

    /** Samples used heap every few milliseconds; the peak is what a report can quote (GC makes it approximate). */
    public static final class PeakHeap extends Thread {
        private volatile boolean running = true;
        private long peak;

        public static PeakHeap begin() {
            PeakHeap p = new PeakHeap();
            p.setDaemon(true);
            p.start();
            return p;
        }

        @Override
        public void run() {
            while (running) {
                peak = Math.max(peak, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        public long end() throws InterruptedException {
            running = false;
            join();
            return peak;
        }
    }
}
