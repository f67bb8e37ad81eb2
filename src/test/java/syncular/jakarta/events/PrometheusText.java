package syncular.jakarta.events;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The Prometheus text exposition format, read strictly enough to fail a test on anything a scraper would refuse. */
public final class PrometheusText {
    /** {@code name{labels} value}: one sample line. */
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (\\S+)$");

    private PrometheusText() { }

    /** Every sample of a scrape by {@code name{labels}}; fails on a line that is neither a sample, HELP/TYPE nor blank. */
    public static Map<String, Double> parse(String text) {
        Map<String, Double> samples = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
            Matcher m = SAMPLE.matcher(line);
            assertTrue(m.matches(), () -> "not Prometheus text: " + line);
            samples.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
        }
        return samples;
    }
}
