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
 * Every Java block of README.md is code this build compiles (and, for the test, runs): each
 * is preceded by {@code <!-- snippet: FILE -->} and must equal the region between
 * {@code // tag::readme[]} and {@code // end::readme[]} of that file under
 * {@code src/test/java/io/krabka/streams/coordination/test/}.
 */
class ReadmeSnippetsTest {

    private static final Path README = Path.of("..", "README.md");
    private static final Path SOURCES = Path.of("src", "test", "java", "io", "krabka", "streams", "coordination", "test");
    private static final Pattern JAVA_BLOCK = Pattern.compile("(?:<!-- snippet: (\\S+) -->\\n)?```java\\n(.*?)```",
            Pattern.DOTALL);
    private static final Pattern TAGGED = Pattern.compile("// tag::readme\\[]\\n(.*?)// end::readme\\[]", Pattern.DOTALL);

    @Test
    void everyJavaBlockOfTheReadmeIsCompiledCode() throws IOException {
        Matcher blocks = JAVA_BLOCK.matcher(Files.readString(README));
        List<String> checked = new ArrayList<>();
        while (blocks.find()) {
            String file = blocks.group(1);
            assertThat(file).as("a Java block of README.md without a snippet marker:%n%s", blocks.group(2)).isNotNull();
            Matcher tagged = TAGGED.matcher(Files.readString(SOURCES.resolve(file)));
            assertThat(tagged.find()).as("%s has a tagged readme region", file).isTrue();
            assertThat(blocks.group(2)).as("README.md's block from %s", file).isEqualTo(tagged.group(1));
            checked.add(file);
        }
        assertThat(checked).as("the README's Java blocks").containsExactly("readme/Dispatcher.java", "readme/DispatcherTest.java",
                "readme/GuardedSends.java", "readme/WorkRunnerExample.java");
    }
}
