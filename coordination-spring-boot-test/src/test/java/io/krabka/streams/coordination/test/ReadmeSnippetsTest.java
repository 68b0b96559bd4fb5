package io.krabka.streams.coordination.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every Java block of README.md, and the marked ones of docs/USER-GUIDE.md, is code this
 * build compiles (and, for the tests, runs): each is preceded by
 * {@code <!-- snippet: FILE -->} and must equal the region between
 * {@code // tag::readme[]} and {@code // end::readme[]} of that file under
 * {@code src/test/java/io/krabka/streams/coordination/test/}.
 */
class ReadmeSnippetsTest {

    private static final Path README = Path.of("..", "README.md");
    private static final Path USER_GUIDE = Path.of("..", "docs", "USER-GUIDE.md");
    private static final Path SOURCES =
            Path.of("src", "test", "java", "io", "krabka", "streams", "coordination", "test");
    private static final Pattern JAVA_BLOCK =
            Pattern.compile("(?:<!-- snippet: (\\S+) -->\\n)?```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern TAGGED =
            Pattern.compile("// tag::readme\\[]\\n(.*?)// end::readme\\[]", Pattern.DOTALL);

    @Test
    void everyJavaBlockOfTheReadmeIsCompiledCode() throws IOException {
        assertThat(checkedSnippets(README, true))
                .as("the README's Java blocks")
                .containsExactly(
                        "readme/Dispatcher.java",
                        "readme/DispatcherTest.java",
                        "readme/GuardedSends.java",
                        "readme/WorkRunnerExample.java");
    }

    @Test
    void theUserGuidesDeviceEventListenerAndPipelineTestAreCompiledCode() throws IOException {
        assertThat(checkedSnippets(USER_GUIDE, false))
                .as("the USER-GUIDE's marked Java blocks")
                .containsExactly(
                        "guide/Device.java",
                        "guide/HeldRoles.java",
                        "guide/Rollouts.java",
                        "guide/ReactiveRollouts.java",
                        "guide/RequestDispatcherTest.java");
    }

    /** The snippet files of the document's marked Java blocks, each checked against its file; every block marked when {@code allMarked}. */
    private static List<String> checkedSnippets(Path document, boolean allMarked) throws IOException {
        Matcher blocks = JAVA_BLOCK.matcher(Files.readString(document));
        List<String> checked = new ArrayList<>();
        while (blocks.find()) {
            String file = blocks.group(1);
            if (file == null && !allMarked) {
                continue;
            }
            assertThat(file)
                    .as("a Java block of %s without a snippet marker:%n%s", document, blocks.group(2))
                    .isNotNull();
            Matcher tagged = TAGGED.matcher(Files.readString(SOURCES.resolve(file)));
            assertThat(tagged.find()).as("%s has a tagged readme region", file).isTrue();
            assertThat(blocks.group(2)).as("%s's block from %s", document, file).isEqualTo(tagged.group(1));
            checked.add(file);
        }
        return checked;
    }
}
