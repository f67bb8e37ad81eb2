package syncular.jakarta.sync;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.ResponseWriter;

/**
 * An encoded response body held for the serve-gate re-read (ARCHITECTURE request step 6, issue #5 "bounded
 * memory"): bytes stay in memory up to a threshold; a body beyond it spills to a temporary file, so a large response
 * is never held twice (frames and bytes) nor as one array, and is streamed from the file once the gate has verified
 * it. {@link #close()} deletes the file; it is idempotent and must run whatever happens (the response was sent, the
 * gate refused it, the client went away).
 */
public final class ResponseSpool extends OutputStream {
    private static final System.Logger LOG = System.getLogger(ResponseSpool.class.getName());

    private final long threshold;
    private byte[] memory = new byte[256];
    private int memoryLength;
    private Path file;
    private OutputStream fileOut;
    private long size;
    private boolean finished;
    private boolean closed;

    /** @param threshold the most bytes held in memory; beyond it the body moves to a temporary file */
    public ResponseSpool(long threshold) {
        if (threshold < 0) throw new IllegalArgumentException("threshold must not be negative");
        this.threshold = threshold;
    }

    /** Encodes {@code response} into a new spool; the caller owns (and closes) it. */
    public static ResponseSpool encode(ResponseMessage response, long threshold) {
        ResponseSpool spool = new ResponseSpool(threshold);
        try {
            ResponseWriter w = new ResponseWriter(spool, response.wireVersion());
            for (ResponseFrame f : response.frames()) w.write(f);
            w.end();
            spool.finish();
            return spool;
        } catch (RuntimeException e) {
            spool.close();
            throw e;
        }
    }

    @Override
    public void write(int b) {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) {
        if (finished || closed) throw new IllegalStateException("the spool is finished");
        try {
            if (file == null && memoryLength + (long) len > threshold) spill();
            if (file != null) {
                fileOut.write(b, off, len);
            } else {
                if (memoryLength + len > memory.length) {
                    memory = Arrays.copyOf(memory, (int) Math.min(threshold,
                            Math.max(memoryLength + (long) len, memory.length * 2L)));
                }
                System.arraycopy(b, off, memory, memoryLength, len);
                memoryLength += len;
            }
            size += len;
        } catch (IOException e) {
            throw new UncheckedIOException("response spool: the temporary file could not be written", e);
        }
    }

    private void spill() throws IOException {
        file = Files.createTempFile("syncular-response-", ".bin");
        fileOut = new BufferedOutputStream(Files.newOutputStream(file), 64 * 1024);
        fileOut.write(memory, 0, memoryLength);
        memory = null;
        memoryLength = 0;
    }

    /** Ends writing; the body can then be read. */
    public void finish() {
        if (finished) return;
        finished = true;
        if (fileOut != null) {
            try {
                fileOut.close();
            } catch (IOException e) {
                throw new UncheckedIOException("response spool: the temporary file could not be written", e);
            }
        }
    }

    /** The body's length in bytes. */
    public long size() { return size; }

    /** Whether the body went to a temporary file. */
    public boolean spilled() { return file != null; }

    /** Copies the whole body to {@code out} (the HTTP response, possibly through gzip). */
    public void writeTo(OutputStream out) throws IOException {
        if (!finished) throw new IllegalStateException("finish the spool first");
        if (closed) throw new IllegalStateException("the spool is closed");
        if (file == null) {
            out.write(memory, 0, memoryLength);
            return;
        }
        try (InputStream in = Files.newInputStream(file)) {
            in.transferTo(out);
        }
    }

    /** Deletes the temporary file, if any. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        memory = null;
        if (file != null) {
            try {
                if (fileOut != null) fileOut.close();
                Files.deleteIfExists(file);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "response spool: a temporary file could not be deleted", e);
            }
        }
    }
}
