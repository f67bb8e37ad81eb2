package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * Mutated and truncated golden vectors (SPEC §1.7, STYLE §6.12): every input either decodes — and then, encodings
 * being canonical, re-encodes to the very same bytes — or fails with {@link DecodeException}; never another
 * exception, never a hang. {@value #TRIES} tries × the inputs per try cover at least {@code syncular.fuzz.inputs}
 * (default 100,000) inputs, spread evenly over every binary vector — the 0.15.48 ones, their wire-3 derivations
 * ({@link Wire3Vectors}, so conflictColumns and the version-3 layouts are mutated too) and the wire-3 sparse push
 * rows; each input has its own deadline
 * ({@code syncular.fuzz.timeout-ms}, default 2,000 ms, generous for a shared 2-core machine).
 */
public class MutationFuzzTest {
    static final int TRIES = 100;
    static final long TOTAL = Long.getLong("syncular.fuzz.inputs", 100_000);
    static final long TIMEOUT_MS = Long.getLong("syncular.fuzz.timeout-ms", 2_000);
    static final List<Vectors.Binary> VECTORS = allVectors();
    static final AtomicLong INPUTS = new AtomicLong();
    static final AtomicLong DECODED = new AtomicLong();

    private static final int[] BYTES = {0x00, 0x01, 0x02, 0x03, 0x7f, 0x80, 0xfe, 0xff};
    private static final long[] U32 = {0, 1, 2, 7, 0x7f, 0xff, 0x7fffffffL, 0x80000000L, 0xfffffffeL, 0xffffffffL};
    private static final long[] I64 = {0, 1, -1, (1L << 53) - 1, 1L << 53, -(1L << 53), Long.MIN_VALUE, Long.MAX_VALUE,
            0x7ff8000000000001L};

    private static List<Vectors.Binary> allVectors() {
        List<Vectors.Binary> all = new java.util.ArrayList<>(Vectors.validBinaries());
        all.addAll(Wire3Vectors.binaries());
        all.addAll(Wire3Vectors.pushBinaries());
        return List.copyOf(all);
    }

    @Property(tries = TRIES)
    void mutatedVectorsDecodeOrFailWithTheTypedError(@ForAll long seed) throws InterruptedException {
        long perTry = (TOTAL + TRIES - 1) / TRIES;
        Random rnd = new Random(seed);
        Worker w = new Worker(seed, perTry, rnd);
        Thread t = new Thread(w, "wire-fuzz");
        t.setDaemon(true);
        t.start();
        while (t.isAlive()) {
            t.join(50);
            long started = w.startedAt;
            if (t.isAlive() && started != 0 && System.nanoTime() - started > TIMEOUT_MS * 1_000_000) {
                t.interrupt();
                fail("input " + w.current + " (vector " + w.vector + ", seed " + seed + ") ran longer than " + TIMEOUT_MS + " ms");
            }
        }
        if (w.failure != null) throw w.failure;
    }

    @AfterContainer
    static void everyInputWasRun() {
        assertTrue(INPUTS.get() >= TOTAL, () -> "only " + INPUTS.get() + " mutated inputs ran, " + TOTAL + " wanted");
        System.out.println("[wire-fuzz] " + INPUTS.get() + " mutated inputs over " + VECTORS.size() + " vectors; "
                + DECODED.get() + " still decoded (and re-encoded byte-identical)");
    }

    private static final class Worker implements Runnable {
        final long seed;
        final long count;
        final Random rnd;
        volatile long startedAt;
        volatile long current;
        volatile String vector;
        AssertionError failure;

        Worker(long seed, long count, Random rnd) {
            this.seed = seed;
            this.count = count;
            this.rnd = rnd;
        }

        @Override public void run() {
            for (long i = 0; i < count; i++) {
                Vectors.Binary v = VECTORS.get((int) (i % VECTORS.size())); // spread evenly over every vector
                byte[] input = mutate(v.bytes(), rnd);
                current = i;
                vector = v.kind() + "/" + v.name();
                startedAt = System.nanoTime();
                try {
                    Object decoded = Vectors.decode(v.kind(), input);
                    DECODED.incrementAndGet();
                    if (!containsDetails(decoded)) {
                        // canonical encoding: a successful decode must re-encode to exactly the input
                        assertArrayEquals(input, Vectors.encode(decoded), "non-canonical bytes accepted");
                    }
                } catch (DecodeException expected) {
                    // the typed decode error: fine
                } catch (Throwable t) {
                    failure = new AssertionError("vector " + vector + ", seed " + seed + ", input " + i + " ("
                            + input.length + " bytes): " + t, t);
                    return;
                } finally {
                    startedAt = 0;
                    INPUTS.incrementAndGet();
                }
            }
        }
    }

    /** PUSH_RESULT_DETAILS JSON is normalized on re-encode (SPEC §6.3.1), so only there bytes may differ. */
    private static boolean containsDetails(Object decoded) {
        return decoded instanceof ResponseMessage m && m.frames().stream().anyMatch(f -> f instanceof PushResultDetails);
    }

    /** One to three mutations of {@code base}; also drives the live-endpoint fuzz ({@code SyncFuzzIT}). */
    public static byte[] mutate(byte[] base, Random r) {
        byte[] b = base.clone();
        int ops = 1 + r.nextInt(3);
        for (int k = 0; k < ops; k++) {
            if (b.length == 0) b = new byte[] {(byte) r.nextInt(256)};
            int pos = r.nextInt(b.length);
            switch (r.nextInt(8)) {
                case 0: b[pos] ^= (byte) (1 << r.nextInt(8)); break;
                case 1: b[pos] = (byte) BYTES[r.nextInt(BYTES.length)]; break;
                case 2: b = Arrays.copyOf(b, r.nextInt(b.length)); break; // truncation
                case 3: { // delete a range
                    int n = 1 + r.nextInt(Math.min(16, b.length - pos));
                    byte[] c = new byte[b.length - n];
                    System.arraycopy(b, 0, c, 0, pos);
                    System.arraycopy(b, pos + n, c, pos, b.length - pos - n);
                    b = c;
                    break;
                }
                case 4: { // insert random bytes
                    byte[] ins = new byte[1 + r.nextInt(8)];
                    r.nextBytes(ins);
                    byte[] c = new byte[b.length + ins.length];
                    System.arraycopy(b, 0, c, 0, pos);
                    System.arraycopy(ins, 0, c, pos, ins.length);
                    System.arraycopy(b, pos, c, pos + ins.length, b.length - pos);
                    b = c;
                    break;
                }
                case 5: { // a length/count field gone wrong
                    long v = r.nextInt(4) == 0 ? b.length - pos + r.nextInt(9) - 4 : U32[r.nextInt(U32.length)];
                    for (int i = 0; i < 4 && pos + i < b.length; i++) b[pos + i] = (byte) (v >>> (8 * i));
                    break;
                }
                case 6: { // an i64 at the edge of the safe range
                    long v = I64[r.nextInt(I64.length)];
                    for (int i = 0; i < 8 && pos + i < b.length; i++) b[pos + i] = (byte) (v >>> (8 * i));
                    break;
                }
                default: { // duplicate a chunk elsewhere
                    int n = 1 + r.nextInt(Math.min(12, b.length - pos));
                    int to = r.nextInt(b.length);
                    byte[] chunk = Arrays.copyOfRange(b, pos, pos + n);
                    for (int i = 0; i < n && to + i < b.length; i++) b[to + i] = chunk[i];
                    break;
                }
            }
        }
        return b;
    }
}
