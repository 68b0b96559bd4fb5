package io.krabka.streams.coordination;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The layering the package names promise: names and tokens, then records, then rules. */
class ArchitectureTest {

    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.krabka.streams.coordination");

    @Test
    void coreHasNoSpringDependency() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("org.springframework..").check(CORE);
    }

    @Test
    void recordCodecDoesNotKnowTheSuccessionRules() {
        noClasses().that().resideInAPackage("..coordination.record..")
                .should().dependOnClassesThat().resideInAPackage("..coordination.succession..")
                .check(CORE);
    }

    @Test
    void successionRulesReadNoWallClock() {
        noClasses().that().resideInAPackage("..coordination.succession..")
                .should().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(java.time.Instant.class, "now")
                .check(CORE);
    }
}
