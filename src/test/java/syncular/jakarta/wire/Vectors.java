package syncular.jakarta.wire;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** Access to the golden vectors, read in place from {@code -Dsyncular.vectors} (never copied into the repo). */
final class Vectors {
    private Vectors() { }

    static Path root() {
        Path p = Paths.get(System.getProperty("syncular.vectors", "../shared/vectors"));
        if (!Files.isDirectory(p)) throw new IllegalStateException("golden vectors not found at " + p.toAbsolutePath());
        return p;
    }

    /** Every {@code <kind>/manifest.json}, sorted by kind. */
    static List<Path> manifests() {
        try (Stream<Path> s = Files.list(root())) {
            List<Path> out = new ArrayList<>();
            s.sorted().forEach(d -> {
                Path m = d.resolve("manifest.json");
                if (Files.isRegularFile(m)) out.add(m);
            });
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every valid binary vector ({@code .bin} of a listed case), as {@code kind} + bytes. */
    static List<Binary> validBinaries() {
        List<Binary> out = new ArrayList<>();
        for (Path m : manifests()) {
            Map<?, ?> manifest = (Map<?, ?>) Json.parse(read(m));
            String kind = (String) manifest.get("kind");
            for (Object c : (List<?>) manifest.get("cases")) {
                Object bin = ((Map<?, ?>) c).get("bin");
                if (bin != null) out.add(new Binary(kind, (String) ((Map<?, ?>) c).get("name"), bytes(m.getParent().resolve((String) bin))));
            }
        }
        return out;
    }

    record Binary(String kind, String name, byte[] bytes) { }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] bytes(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Decodes a binary vector of {@code kind}; the result is a message, a segment, or — kind {@code push}, whose
     * vectors are sparse rows of the one push-vector table ({@link SparseRowCodecTest#PUSH}) — a {@link SparseRow}.
     */
    static Object decode(String kind, byte[] b) {
        switch (kind) {
            case "request": return RequestDecoder.decode(b);
            case "response": return ResponseDecoder.decode(b);
            case "segment": return RowsSegmentDecoder.decode(b, true);
            case "push": return SparseRowCodec.decodeLossless(SparseRowCodecTest.PUSH, 0, b);
            default: throw new IllegalArgumentException("no binary decoder for vector kind " + kind);
        }
    }

    static Object render(Object decoded) {
        if (decoded instanceof RequestMessage m) return WireJson.render(m);
        if (decoded instanceof ResponseMessage m) return WireJson.render(m);
        if (decoded instanceof SparseRow r) return WireJson.renderSparseRow(SparseRowCodecTest.PUSH, r);
        return WireJson.render((RowsSegment) decoded);
    }

    static byte[] encode(Object decoded) {
        if (decoded instanceof RequestMessage m) return RequestEncoder.encode(m);
        if (decoded instanceof ResponseMessage m) return ResponseEncoder.encode(m);
        if (decoded instanceof SparseRow r) return SparseRowCodec.encode(SparseRowCodecTest.PUSH, 0, r);
        return RowsSegmentEncoder.encode((RowsSegment) decoded);
    }

    /** Deep equality of JSON trees with numbers compared by value; returns a path to the first difference or null. */
    static String diff(Object expected, Object actual, String path) {
        if (expected instanceof Map<?, ?> e) {
            if (!(actual instanceof Map<?, ?> a)) return path + ": expected an object";
            if (!e.keySet().equals(a.keySet())) return path + ": keys " + e.keySet() + " vs " + a.keySet();
            for (Object k : e.keySet()) {
                String d = diff(e.get(k), a.get(k), path + "." + k);
                if (d != null) return d;
            }
            return null;
        }
        if (expected instanceof List<?> e) {
            if (!(actual instanceof List<?> a)) return path + ": expected an array";
            if (e.size() != a.size()) return path + ": length " + e.size() + " vs " + a.size();
            Iterator<?> ia = a.iterator();
            int i = 0;
            for (Object x : e) {
                String d = diff(x, ia.next(), path + "[" + i++ + "]");
                if (d != null) return d;
            }
            return null;
        }
        if (expected instanceof Number e) {
            if (!(actual instanceof Number a)) return path + ": expected a number";
            return num(e).compareTo(num(a)) == 0 ? null : path + ": " + e + " vs " + a;
        }
        if (expected == null ? actual == null : expected.equals(actual)) return null;
        return path + ": " + expected + " vs " + actual;
    }

    private static BigDecimal num(Number n) {
        return n instanceof BigDecimal b ? b : n instanceof Double || n instanceof Float ? BigDecimal.valueOf(n.doubleValue())
                : BigDecimal.valueOf(n.longValue());
    }
}
