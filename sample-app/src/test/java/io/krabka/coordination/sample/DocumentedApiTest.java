package io.krabka.coordination.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Executable;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/**
 * What README.md and docs/USER-GUIDE.md name in code is real: every {@code Type.method(…)},
 * {@code variable.method(…)} (the variable named after its type) and {@code new Type(…)}
 * exists as a public method or constructor with that many parameters; every fully
 * qualified class exists and is not deprecated (so the docs cannot recommend Spring
 * Kafka 4's deprecated {@code JsonSerializer}); every Java block shows its imports (an
 * {@code Imports:} line right before it, or {@code import} lines in it); and no Boot 3
 * starter name is left ({@code spring-boot-starter-web} is {@code -webmvc} in Boot 4).
 */
class DocumentedApiTest {

    private static final String OURS = "io.krabka.streams.coordination";
    /** Types of other libraries that the docs name by their simple name. */
    private static final List<String> FOREIGN_PACKAGES = List.of(
            "org.apache.kafka.clients.producer",
            "org.apache.kafka.clients.consumer",
            "org.apache.kafka.clients.admin",
            "org.springframework.kafka.core",
            "java.time",
            "java.util",
            "java.util.concurrent");

    private static final Pattern FENCED = Pattern.compile("```(\\w*)\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern SPAN = Pattern.compile("`([^`]+)`");
    private static final Pattern QUALIFIED_CALL =
            Pattern.compile("(?<![\\w.])(new\\s+)?([A-Za-z]\\w*(?:\\.[A-Z]\\w*)*)(?:\\.([a-z]\\w*))?\\(([^()]*)\\)");
    private static final Pattern CLASS_NAME = Pattern.compile(
            "\\b((?:io\\.krabka|org\\.springframework|org\\.apache\\.kafka)(?:\\.[a-z]\\w*)+(?:\\.[A-Z]\\w*)+)\\b");

    private static final Map<String, Class<?>> TYPES = ourPublicTypes();

    @ParameterizedTest
    @ValueSource(strings = {"README.md", "docs/USER-GUIDE.md"})
    void everyMethodTheDocsNameExistsOnItsType(String file) throws IOException {
        String text = Files.readString(Path.of("..").resolve(file));
        String prose = FENCED.matcher(text).replaceAll("");
        List<String> checked = new ArrayList<>();
        List<String> wrong = new ArrayList<>();
        Matcher spans = SPAN.matcher(prose);
        while (spans.find()) {
            Matcher call = QUALIFIED_CALL.matcher(spans.group(1).replace('\n', ' '));
            while (call.find()) {
                boolean constructor = call.group(1) != null;
                String receiver = call.group(2);
                String method = call.group(3);
                int arity = arity(call.group(4));
                if (!constructor && method == null) {
                    continue; // a bare name(…): no type to check it on
                }
                Optional<Class<?>> type = resolve(receiver);
                if (type.isEmpty()) {
                    wrong.add(call.group() + ": no public type " + receiver);
                    continue;
                }
                boolean exists = constructor
                        ? Arrays.stream(type.get().getConstructors()).anyMatch(c -> accepts(c, arity))
                        : Arrays.stream(type.get().getMethods())
                                .anyMatch(m -> m.getName().equals(method) && accepts(m, arity));
                checked.add(call.group());
                if (!exists) {
                    wrong.add(call.group() + ": " + type.get().getName() + " has no public "
                            + (constructor ? "constructor" : method) + " with " + arity + " parameter(s)");
                }
            }
        }
        assertThat(wrong).as("code in %s that names what does not exist", file).isEmpty();
        assertThat(checked).as("calls checked in %s", file).isNotEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"README.md", "docs/USER-GUIDE.md"})
    void everyClassTheDocsNameExistsAndIsNotDeprecated(String file) throws IOException {
        Matcher names = CLASS_NAME.matcher(Files.readString(Path.of("..").resolve(file)));
        List<String> wrong = new ArrayList<>();
        while (names.find()) {
            String name = names.group(1);
            try {
                Class<?> type = load(name);
                if (type.isAnnotationPresent(Deprecated.class)) {
                    wrong.add(name + " is deprecated");
                }
            } catch (ClassNotFoundException e) {
                wrong.add(name + " does not exist");
            }
        }
        assertThat(wrong).as("classes %s names", file).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"README.md", "docs/USER-GUIDE.md"})
    void everyJavaBlockShowsItsImportsAndNoBoot3StarterIsNamed(String file) throws IOException {
        String text = Files.readString(Path.of("..").resolve(file));
        Matcher blocks = FENCED.matcher(text);
        List<String> withoutImports = new ArrayList<>();
        while (blocks.find()) {
            if (!blocks.group(1).equals("java") || blocks.group(2).contains("import ")) {
                continue;
            }
            List<String> before = text.substring(0, blocks.start())
                    .lines()
                    .filter(line -> !line.isBlank() && !line.strip().startsWith("<!--"))
                    .toList();
            // The Imports: paragraph ends right before the block (after a snippet marker, if any).
            String paragraph = before.isEmpty() ? "" : lastParagraph(text.substring(0, blocks.start()));
            if (!paragraph.strip().startsWith("Imports:")) {
                withoutImports.add(blocks.group(2).lines().findFirst().orElse(""));
            }
        }
        assertThat(withoutImports)
                .as("Java blocks of %s without their imports", file)
                .isEmpty();
        assertThat(Pattern.compile("spring-boot-starter-web(?![a-z])")
                        .matcher(text)
                        .find())
                .as("%s names spring-boot-starter-web (Boot 4: spring-boot-starter-webmvc)", file)
                .isFalse();
    }

    /** The paragraph that ends right before a block, snippet markers left out. */
    private static String lastParagraph(String before) {
        List<String> lines = new ArrayList<>(before.lines().toList());
        while (!lines.isEmpty()
                && (lines.get(lines.size() - 1).isBlank()
                        || lines.get(lines.size() - 1).strip().startsWith("<!--"))) {
            lines.remove(lines.size() - 1);
        }
        int start = lines.size();
        while (start > 0 && !lines.get(start - 1).isBlank()) {
            start--;
        }
        return String.join("\n", lines.subList(start, lines.size()));
    }

    private static int arity(String arguments) {
        String args = arguments.strip();
        if (args.isEmpty()) {
            return 0;
        }
        return args.contains("…") || args.contains("...") ? -1 : args.split(",").length;
    }

    private static boolean accepts(Executable executable, int arity) {
        return arity < 0
                || executable.getParameterCount() == arity
                || (executable.isVarArgs() && arity >= executable.getParameterCount() - 1);
    }

    /** {@code Leadership}, {@code Contender.Listener}, or a variable named after its type ({@code guardedSenders}). */
    private static Optional<Class<?>> resolve(String receiver) {
        String[] parts = receiver.split("\\.");
        String outer = Character.toUpperCase(parts[0].charAt(0)) + parts[0].substring(1);
        Class<?> type = TYPES.get(outer);
        for (int i = 0; type == null && i < FOREIGN_PACKAGES.size(); i++) {
            try {
                type = Class.forName(FOREIGN_PACKAGES.get(i) + "." + outer);
            } catch (ClassNotFoundException e) {
                // not in that package
            }
        }
        for (int i = 1; type != null && i < parts.length; i++) {
            String nested = parts[i];
            type = Arrays.stream(type.getClasses())
                    .filter(c -> c.getSimpleName().equals(nested))
                    .findFirst()
                    .orElse(null);
        }
        return Optional.ofNullable(type);
    }

    /** {@code a.b.C} or a nested {@code a.b.C.D}. */
    private static Class<?> load(String name) throws ClassNotFoundException {
        String binary = name;
        while (true) {
            try {
                return Class.forName(binary);
            } catch (ClassNotFoundException e) {
                int dot = binary.lastIndexOf('.');
                if (dot < 0 || !Character.isUpperCase(binary.charAt(binary.lastIndexOf('.', dot - 1) + 1))) {
                    throw e;
                }
                binary = binary.substring(0, dot) + "$" + binary.substring(dot + 1);
            }
        }
    }

    private static Map<String, Class<?>> ourPublicTypes() {
        Map<String, Class<?>> types = new HashMap<>();
        try {
            Resource[] classes = new PathMatchingResourcePatternResolver()
                    .getResources("classpath*:" + OURS.replace('.', '/') + "/**/*.class");
            Stream.of(classes)
                    .map(DocumentedApiTest::className)
                    .filter(name -> !name.contains("$"))
                    .forEach(name -> {
                        try {
                            Class<?> type = Class.forName(name, false, DocumentedApiTest.class.getClassLoader());
                            if (Modifier.isPublic(type.getModifiers())) {
                                types.putIfAbsent(type.getSimpleName(), type);
                            }
                        } catch (ClassNotFoundException | LinkageError e) {
                            // a test class of another module, say: not documented API
                        }
                    });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return types;
    }

    private static String className(Resource resource) {
        try {
            String url = resource.getURL().toString();
            String path = url.substring(url.indexOf(OURS.replace('.', '/')));
            return path.substring(0, path.length() - ".class".length()).replace('/', '.');
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
