package io.krabka.coordination.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every {@code ```java} block of README.md and docs/USER-GUIDE.md is code this build compiles.
 *
 * <p>A block marked {@code <!-- snippet: FILE -->} is the tagged region of FILE in
 * coordination-spring-boot-test, which compiles and runs it (its ReadmeSnippetsTest checks
 * the same). Every other block has a twin in this package: the lines between
 * {@code // snippet-begin DOC: what it shows} and {@code // snippet-end} of one source file,
 * equal to the block once both are de-indented. A fragment (a few statements, a class) sits
 * inside a method or class of its twin file, which supplies what the fragment only names.
 */
class JavaBlocksCompiledTest {

    private static final Path ROOT = Path.of("..");
    private static final Path TWINS = Path.of("src", "test", "java", "io", "krabka", "coordination", "docs");
    private static final Path MARKED_SNIPPETS = ROOT.resolve(Path.of("coordination-spring-boot-test", "src", "test", "java",
            "io", "krabka", "streams", "coordination", "test"));
    private static final Pattern JAVA_BLOCK = Pattern.compile(
            "(?:<!-- snippet: (\\S+) -->\\n)?[ \\t]*```java\\n(.*?)\\n[ \\t]*```", Pattern.DOTALL);
    private static final Pattern ANY_BLOCK = Pattern.compile("```.*?```", Pattern.DOTALL);
    private static final Pattern HEADING = Pattern.compile("^#{1,6} .*$", Pattern.MULTILINE);
    private static final Pattern TWIN = Pattern.compile(
            "// snippet-begin (\\S+): ([^\\n]*)\\n(.*?)\\n[ \\t]*// snippet-end", Pattern.DOTALL);
    private static final Pattern MARKED_REGION = Pattern.compile("// tag::readme\\[]\\n(.*?)// end::readme\\[]",
            Pattern.DOTALL);

    /** A Java block of a document: where it is, the file it is marked with (or null), its code. */
    record Block(String document, int line, String heading, String markedFile, String code) {
        String describe() {
            String first = code.lines().filter(l -> !l.isBlank()).findFirst().orElse("").strip();
            return document + " line " + line + " (under \"" + heading + "\"), the block that starts `" + first + "`";
        }
    }

    /** A compiled twin: the document it copies, what it shows, its file and its code. */
    record Twin(String document, String name, Path file, String code) {
    }

    @ParameterizedTest
    @ValueSource(strings = { "README.md", "docs/USER-GUIDE.md" })
    void everyJavaBlockHasACompiledTwin(String document) throws IOException {
        List<Block> blocks = javaBlocks(document, Files.readString(ROOT.resolve(document)));
        assertThat(blocks).as("the Java blocks of %s", document).isNotEmpty();
        assertThat(blocksWithoutTwin(blocks, twins())).as("Java blocks of %s that no compiled source holds verbatim"
                + " (add a twin under sample-app/%s between '// snippet-begin %s: …' and '// snippet-end')",
                document, TWINS, document).isEmpty();
    }

    @Test
    void everyTwinStillCopiesABlockOfItsDocument() throws IOException {
        List<String> stale = new ArrayList<>();
        List<Twin> twins = twins();
        for (Twin twin : twins) {
            Path document = ROOT.resolve(twin.document());
            boolean copied = Files.exists(document) && javaBlocks(twin.document(), Files.readString(document)).stream()
                    .anyMatch(block -> block.markedFile() == null && block.code().equals(twin.code()));
            if (!copied) {
                stale.add(twin.file().getFileName() + " (\"" + twin.name() + "\") copies no Java block of " + twin.document());
            }
        }
        assertThat(twins).as("the twins under %s", TWINS).isNotEmpty();
        assertThat(stale).as("twins whose block changed or went: copy the block again, or delete the twin").isEmpty();
    }

    @Test
    void aBlockWithoutATwinIsNamedWithItsPlace() throws IOException {
        String document = "# Guide\n\n## Sending\n\nText.\n\n```java\nleadership.send(record);   // no twin holds this\n```\n";
        List<String> missing = blocksWithoutTwin(javaBlocks("docs/EXAMPLE.md", document), twins());
        assertThat(missing).containsExactly(
                "docs/EXAMPLE.md line 7 (under \"## Sending\"), the block that starts `leadership.send(record);   // no twin holds this`");
    }

    private static List<String> blocksWithoutTwin(List<Block> blocks, List<Twin> twins) throws IOException {
        List<String> missing = new ArrayList<>();
        for (Block block : blocks) {
            if (block.markedFile() != null) {
                Path file = MARKED_SNIPPETS.resolve(block.markedFile());
                Matcher region = Files.exists(file) ? MARKED_REGION.matcher(Files.readString(file)) : null;
                if (region == null || !region.find() || !deindent(region.group(1)).equals(block.code())) {
                    missing.add(block.describe() + ": marked " + block.markedFile() + ", whose tagged region differs or is missing");
                }
            } else if (twins.stream().noneMatch(t -> t.document().equals(block.document()) && t.code().equals(block.code()))) {
                missing.add(block.describe());
            }
        }
        return missing;
    }

    static List<Block> javaBlocks(String document, String text) {
        List<Block> blocks = new ArrayList<>();
        Matcher matcher = JAVA_BLOCK.matcher(text);
        while (matcher.find()) {
            String before = text.substring(0, matcher.start());
            int line = (int) before.chars().filter(c -> c == '\n').count() + 1 + (matcher.group(1) == null ? 0 : 1);
            Matcher headings = HEADING.matcher(ANY_BLOCK.matcher(before).replaceAll(""));
            String heading = "the top";
            while (headings.find()) {
                heading = headings.group();
            }
            blocks.add(new Block(document, line, heading, matcher.group(1), deindent(matcher.group(2))));
        }
        return blocks;
    }

    static List<Twin> twins() throws IOException {
        List<Twin> twins = new ArrayList<>();
        try (Stream<Path> files = Files.list(TWINS)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                Matcher matcher = TWIN.matcher(Files.readString(file));
                while (matcher.find()) {
                    twins.add(new Twin(matcher.group(1), matcher.group(2), file, deindent(matcher.group(3))));
                }
            }
        }
        return twins;
    }

    /** The code without trailing blanks, blank lines at either end, or the indent all its lines share. */
    static String deindent(String code) {
        List<String> lines = new ArrayList<>(code.lines().map(String::stripTrailing).toList());
        while (!lines.isEmpty() && lines.get(0).isEmpty()) {
            lines.remove(0);
        }
        while (!lines.isEmpty() && lines.get(lines.size() - 1).isEmpty()) {
            lines.remove(lines.size() - 1);
        }
        int indent = lines.stream().filter(l -> !l.isEmpty()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return String.join("\n", lines.stream().map(l -> l.isEmpty() ? l : l.substring(indent)).toList());
    }
}
