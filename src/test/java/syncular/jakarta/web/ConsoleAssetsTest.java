package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import syncular.jakarta.events.ServerEvent;

/**
 * The console page's files as the WAR ships them: the whitelist, the entity tags, and what the page may reference
 * (only its own files, no inline code the Content-Security-Policy would block, every element id its script uses,
 * every event type the live tail must listen for).
 */
class ConsoleAssetsTest {
    private final ConsoleAssets assets = ConsoleAssets.shipped();

    private String text(String name) {
        return new String(assets.find(name).orElseThrow().body(), StandardCharsets.UTF_8);
    }

    @Test
    void servesEveryWhitelistedFileWithItsMediaTypeAndNothingElse() {
        for (var f : ConsoleAssets.FILES.entrySet()) {
            ConsoleAssets.Asset a = assets.find(f.getKey()).orElseThrow();
            assertEquals(f.getValue(), a.mediaType());
            assertTrue(a.body().length > 0, f.getKey());
        }
        for (String other : new String[] {null, "", "../WEB-INF/web.xml", "console.js/", "CONSOLE.JS", "index.htm",
                "../console/index.html", "%2e%2e/web.xml"}) {
            assertTrue(assets.find(other).isEmpty(), String.valueOf(other));
        }
    }

    @Test
    void aMissingFileIsRefusedWhenTheConsoleIsRead() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> new ConsoleAssets(getClass().getClassLoader(), "no-such-folder/"));
        assertTrue(e.getMessage().contains("no-such-folder/"), e.getMessage());
    }

    @Test
    void anEntityTagMatchesItsOwnVersionOnly() {
        ConsoleAssets.Asset page = assets.find(ConsoleAssets.PAGE).orElseThrow();
        ConsoleAssets.Asset script = assets.find("console.js").orElseThrow();
        assertFalse(page.etag().equals(script.etag()));
        assertTrue(page.matches("\"" + page.etag() + "\""));
        assertTrue(page.matches("W/\"" + page.etag() + "\""));
        assertTrue(page.matches("\"elsewhere\", \"" + page.etag() + "\""));
        assertTrue(page.matches("*"));
        assertFalse(page.matches(null));
        assertFalse(page.matches(page.etag()), "an unquoted tag is not an entity tag");
        assertFalse(page.matches("\"" + script.etag() + "\""));
    }

    @Test
    void thePageReferencesOnlyItsOwnFilesAndHasNoInlineCode() {
        String html = text(ConsoleAssets.PAGE);
        Matcher refs = Pattern.compile("\\s(?:src|href)=\"([^\"]*)\"").matcher(html);
        int count = 0;
        while (refs.find()) {
            count++;
            String ref = refs.group(1);
            assertTrue(ref.startsWith("assets/") && ConsoleAssets.FILES.containsKey(ref.substring("assets/".length())),
                    () -> "the page references " + ref + ", which is not one of its files");
        }
        assertEquals(3, count, "the icon, the style sheet and the script");
        assertFalse(Pattern.compile("<script(?![^>]*\\ssrc=)").matcher(html).find(), "an inline script");
        assertFalse(html.contains("<style"), "an inline style sheet");
        assertFalse(Pattern.compile("\\sstyle=").matcher(html).find(), "a style attribute");
        assertFalse(Pattern.compile("\\son[a-z]+=").matcher(html).find(), "an inline event handler");
        for (String name : List.of(ConsoleAssets.PAGE, "console.js", "console.css")) {
            assertFalse(Pattern.compile("(?i)(https?:)?//[a-z0-9.-]+\\.[a-z]{2,}/").matcher(text(name)).find(),
                    () -> name + " names another host");
        }
        String js = text("console.js");
        assertFalse(js.contains("innerHTML") || js.contains("outerHTML") || js.contains("insertAdjacentHTML")
                || js.contains("eval(") || js.contains("new Function"), "markup or code built from strings");
    }

    @Test
    void everyElementTheScriptLooksUpIsOnThePage() {
        Set<String> ids = new TreeSet<>();
        Matcher id = Pattern.compile("\\sid=\"([^\"]+)\"").matcher(text(ConsoleAssets.PAGE));
        while (id.find()) ids.add(id.group(1));
        Set<String> used = new TreeSet<>();
        Matcher lookup = Pattern.compile("\\$\\('([^']+)'\\)").matcher(text("console.js"));
        while (lookup.find()) used.add(lookup.group(1));
        assertTrue(used.size() > 30, used::toString);
        used.removeAll(ids);
        assertEquals(Set.of(), used, "looked up by the script but not on the page");
    }

    @Test
    void theLiveTailListensForEveryEventTypeTheServerEmits() throws Exception {
        Matcher list = Pattern.compile("const EVENT_TYPES = \\[([^\\]]*)\\];").matcher(text("console.js"));
        assertTrue(list.find(), "console.js declares EVENT_TYPES");
        Set<String> listened = new TreeSet<>();
        Matcher name = Pattern.compile("'([^']+)'").matcher(list.group(1));
        while (name.find()) listened.add(name.group(1));
        assertEquals(emittedTypes(), listened);
    }

    /** Each {@link ServerEvent} record's type, read from an instance built with default component values. */
    private static Set<String> emittedTypes() throws Exception {
        Set<String> types = new TreeSet<>();
        for (Class<?> c : ServerEvent.class.getPermittedSubclasses()) {
            RecordComponent[] parts = c.getRecordComponents();
            Class<?>[] shape = new Class<?>[parts.length];
            Object[] values = new Object[parts.length];
            for (int i = 0; i < parts.length; i++) {
                shape[i] = parts[i].getType();
                values[i] = defaultOf(shape[i]);
            }
            Constructor<?> canonical = c.getDeclaredConstructor(shape);
            types.add(((ServerEvent) canonical.newInstance(values)).type());
        }
        assertEquals(ServerEvent.class.getPermittedSubclasses().length, new LinkedHashSet<>(types).size(),
                "one type per event record");
        return types;
    }

    private static Object defaultOf(Class<?> type) {
        if (type == boolean.class) return false;
        if (type == int.class) return 0;
        if (type == long.class) return 0L;
        if (type == double.class) return 0.0;
        return null;
    }
}
