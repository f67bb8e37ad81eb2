package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.annotation.sql.DataSourceDefinition;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;

/**
 * Issue 15: the WAR's own DataSource connects with {@code plan_cache_mode=force_generic_plan} on both servers (the
 * {@code @DataSourceDefinition} Payara reads and the {@code jboss-web.xml} WildFly reads carry the same
 * {@code options}), and PostgreSQL takes that value as the driver passes it.
 */
class GenericPlansTest {
    private static final String EXPECTED = "-c plan_cache_mode=force_generic_plan";

    private static String annotationOptions() {
        DataSourceDefinition d = ServerLifecycle.class.getAnnotation(DataSourceDefinition.class);
        return Arrays.stream(d.properties()).filter(p -> p.startsWith("options="))
                .map(p -> p.substring("options=".length())).findFirst().orElse(null);
    }

    private static String jbossWebOptions() throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        NodeList properties = f.newDocumentBuilder().parse(Path.of("src/main/webapp/WEB-INF/jboss-web.xml").toFile())
                .getElementsByTagName("property");
        for (int i = 0; i < properties.getLength(); i++) {
            Element p = (Element) properties.item(i);
            if ("options".equals(p.getElementsByTagName("name").item(0).getTextContent().trim())) {
                return p.getElementsByTagName("value").item(0).getTextContent().trim();
            }
        }
        return null;
    }

    @Test
    void bothDefinitionsOfTheWarsDataSourceAskForGenericPlans() throws Exception {
        assertEquals(EXPECTED, annotationOptions(), "ServerLifecycle's @DataSourceDefinition");
        assertEquals(EXPECTED, jbossWebOptions(), "WEB-INF/jboss-web.xml");
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(db.url());
            ds.setUser("postgres");
            ds.setOptions(annotationOptions());
            try (Connection c = ds.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SHOW plan_cache_mode")) {
                rs.next();
                assertEquals("force_generic_plan", rs.getString(1));
            }
        }
    }
}
