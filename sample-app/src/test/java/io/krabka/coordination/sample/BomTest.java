package io.krabka.coordination.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The BOM that README tells users to import lists exactly the modules this build
 * publishes (every module of the root pom that does not skip deployment and is not a
 * pom), each at the project's version: a module added, renamed or dropped without the
 * BOM fails here, not in a user's build.
 */
class BomTest {

    private static final Path ROOT = Path.of("..");

    @Test
    void theBomListsEveryPublishedModuleAtTheProjectVersion() throws Exception {
        Document root = parse(ROOT.resolve("pom.xml"));
        String version = child(root.getDocumentElement(), "version");
        Map<String, String> published = new LinkedHashMap<>();
        for (String module : texts(child(root.getDocumentElement(), "modules", Element.class), "module")) {
            Element project = parse(ROOT.resolve(module).resolve("pom.xml")).getDocumentElement();
            boolean deploys = !"pom".equals(child(project, "packaging"))
                    && project.getElementsByTagName("maven.deploy.skip").getLength() == 0;
            if (deploys) {
                published.put(child(project, "artifactId"), version);
            }
        }
        Element bom = parse(ROOT.resolve("coordination-bom/pom.xml")).getDocumentElement();
        Map<String, String> managed = new LinkedHashMap<>();
        NodeList dependencies = bom.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            assertThat(child(dependency, "groupId")).isEqualTo("io.krabka");
            managed.put(child(dependency, "artifactId"), child(dependency, "version"));
        }

        assertThat(published)
                .as("published modules")
                .containsKey("krabka-streams-coordination")
                .containsKey("krabka-coordination-spring-boot-starter");
        assertThat(child(bom, "version")).as("the BOM's own version").isEqualTo(version);
        assertThat(managed).as("what the BOM manages").isEqualTo(published);
    }

    private static Document parse(Path pom) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
    }

    /** The text of {@code parent}'s direct child {@code name}; null when it has none. */
    private static String child(Element parent, String name) {
        Element found = child(parent, name, Element.class);
        return found == null ? null : found.getTextContent().trim();
    }

    private static <T> T child(Element parent, String name, Class<T> type) {
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                return type.cast(element);
            }
        }
        return null;
    }

    private static List<String> texts(Element parent, String name) {
        List<String> texts = new ArrayList<>();
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                texts.add(element.getTextContent().trim());
            }
        }
        return texts;
    }
}
