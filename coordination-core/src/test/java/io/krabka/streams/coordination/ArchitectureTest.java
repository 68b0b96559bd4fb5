package io.krabka.streams.coordination;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noMethods;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

/**
 * The layering the package names promise: value types at the bottom, the record codec
 * and the succession rules above them, the transport SPI and its implementations, and
 * the client and contender on top.
 */
class ArchitectureTest {

    private static final String BASE = "io.krabka.streams.coordination";

    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(BASE);

    /** One slice per package directly under the base; the base package itself is the "api" slice. */
    private static final SliceAssignment PACKAGES = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
            String name = javaClass.getPackageName();
            if (!name.startsWith(BASE)) {
                return SliceIdentifier.ignore();
            }
            String rest = name.substring(BASE.length());
            return SliceIdentifier.of(rest.isEmpty() ? "api" : rest.substring(1).split("\\.")[0]);
        }

        @Override
        public String getDescription() {
            return "the packages of the core";
        }
    };

    @Test
    void packagesFormADirectedAcyclicGraph() {
        slices().assignedFrom(PACKAGES).should().beFreeOfCycles().check(CORE);
    }

    @Test
    void theValueTypesAtTheBottomImportNoOtherPackageOfTheCore() {
        noClasses()
                .that()
                .resideInAPackage(BASE)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(BASE + ".(*)..")
                .check(CORE);
    }

    @Test
    void thePublicApiReturnsNoInternalType() {
        noMethods()
                .that()
                .arePublic()
                .and()
                .areDeclaredInClassesThat()
                .arePublic()
                .and()
                .areDeclaredInClassesThat()
                .resideInAnyPackage(BASE, BASE + ".client")
                .should()
                .haveRawReturnType(describe(
                        "a type of the succession rules",
                        (JavaClass type) -> type.getPackageName().startsWith(BASE + ".succession")))
                .check(CORE);
    }

    @Test
    void thePublicFaceReturnsNoTypeOfTheClientsInternals() {
        noMethods()
                .that()
                .arePublic()
                .and()
                .areDeclaredInClassesThat()
                .arePublic()
                .and()
                .areDeclaredInClassesThat()
                .resideOutsideOfPackage(BASE + ".client.internal..")
                .should()
                .haveRawReturnType(describe(
                        "a type of the client's internals",
                        (JavaClass type) -> type.getPackageName().startsWith(BASE + ".client.internal")))
                .check(CORE);
    }

    /**
     * The client package is the public face; its machinery lives in {@code client.internal}
     * and gets narrow collaborators at construction. It may implement or call the face's
     * interfaces and use its values (results, statuses), never its classes with behaviour:
     * no internal class takes the client or a contender.
     */
    @Test
    void theClientsInternalsUseOnlyInterfacesAndValuesOfThePublicFace() {
        noClasses()
                .that()
                .resideInAPackage(BASE + ".client.internal..")
                .should()
                .dependOnClassesThat(describe(
                        "a class of the public face with behaviour",
                        (JavaClass type) -> type.getPackageName().equals(BASE + ".client")
                                && !type.isInterface()
                                && !type.isEnum()
                                && !type.isRecord()))
                .check(CORE);
    }

    @Test
    void coreHasNoSpringDependency() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.springframework..")
                .check(CORE);
    }

    @Test
    void recordCodecDoesNotKnowTheSuccessionRules() {
        noClasses()
                .that()
                .resideInAPackage("..coordination.record..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("..coordination.succession..")
                .check(CORE);
    }

    @Test
    void successionRulesReadNoWallClock() {
        noClasses()
                .that()
                .resideInAPackage("..coordination.succession..")
                .should()
                .callMethod(System.class, "currentTimeMillis")
                .orShould()
                .callMethod(java.time.Instant.class, "now")
                .check(CORE);
    }

    /**
     * Time and threads come from the injected {@link io.krabka.streams.coordination.runtime.CoordinationRuntime}:
     * a manual runtime can then drive started contenders, their renewals, expiry checks and
     * callbacks, deterministically.
     */
    @Test
    void theClientAndPipelinesTakeTimeAndThreadsOnlyFromTheRuntime() {
        noClasses()
                .that()
                .resideInAnyPackage("..coordination.client..", "..coordination.pipeline..")
                .should()
                .callMethod(System.class, "nanoTime")
                .orShould()
                .callMethod(System.class, "currentTimeMillis")
                .orShould()
                .callMethod(Thread.class, "sleep", long.class)
                .orShould()
                .callMethod(java.util.concurrent.TimeUnit.class, "sleep", long.class)
                .orShould()
                .callConstructorWhere(describe(
                        "a new thread or thread pool",
                        call -> call.getTargetOwner().isAssignableTo(Thread.class)
                                || call.getTargetOwner().isAssignableTo(java.util.concurrent.ExecutorService.class)))
                .orShould()
                .dependOnClassesThat()
                .belongToAnyOf(java.util.concurrent.Executors.class)
                .orShould()
                .callMethodWhere(describe(
                        "a timed wait for one of its own tasks (use the runtime's await)",
                        call -> call.getTargetOwner().isAssignableTo(java.util.concurrent.CompletableFuture.class)
                                && call.getName().equals("get")
                                && call.getTarget().getRawParameterTypes().size() == 2))
                .check(CORE);
    }

    /**
     * A class of the core past about 350 lines says why it is one class: its javadoc has a
     * paragraph that begins "Size:". Size follows cohesion; a class that grows without a
     * reason should be split along a seam, not become the next 900-line state machine.
     */
    @Test
    void aSourceFileOfTheCoreLongerThan350LinesSaysWhyItIsOneClass() throws java.io.IOException {
        java.nio.file.Path sources = java.nio.file.Path.of("src/main/java");
        java.util.Map<String, Integer> unexplained = new java.util.TreeMap<>();
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(sources)) {
            for (java.nio.file.Path file : (Iterable<java.nio.file.Path>)
                    files.filter(f -> f.toString().endsWith(".java"))::iterator) {
                java.util.List<String> lines = java.nio.file.Files.readAllLines(file);
                if (lines.size() > MAX_SOURCE_LINES
                        && lines.stream().noneMatch(line -> line.trim().startsWith("* <p>Size: "))) {
                    unexplained.put(sources.relativize(file).toString(), lines.size());
                }
            }
        }
        org.assertj.core.api.Assertions.assertThat(unexplained)
                .as("source files over %d lines that do not say why", MAX_SOURCE_LINES)
                .isEmpty();
    }

    private static final int MAX_SOURCE_LINES = 350;
}
