package io.krabka.streams.coordination.autoconfigure;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The Spring module adapts the core's contender; it holds no election logic of its own. */
class SpringModuleArchitectureTest {

    private static final JavaClasses SPRING = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(
                    "io.krabka.streams.coordination.autoconfigure",
                    "io.krabka.streams.coordination.spring",
                    "io.krabka.streams.coordination.actuate");

    @Test
    void theSpringModuleDoesNotUseTheSuccessionRules() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "..coordination.autoconfigure..", "..coordination.spring..", "..coordination.actuate..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("..coordination.succession..")
                .check(SPRING);
    }
}
