package io.verbatim.examples;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The house's rules, stated once so that a change cannot break them unseen (issue 24): each module's arrows point
 * one way, no package depends on itself through others, the model is pure, nothing below the command line
 * ({@code cli}) knows it but the examples, nothing knows the examples, and the command line goes without the
 * tests' checks. Production classes only; each module is its package root ({@code layout-store} is {@code store}).
 */
class ArchitectureTest {
    private static final JavaClasses VERBATIM = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("-tests.jar")) // the modules' test jars
            .importPackages("io.verbatim");

    /** The rules below see every module (none passes for having read nothing). */
    @Test
    void everyModuleIsRead() {
        for (String type : java.util.List.of("io.verbatim.model.Layout", "io.verbatim.budget.BrokerBudget",
                "io.verbatim.pipeline.SegmentReplicator", "io.verbatim.store.LayoutStore", "io.verbatim.net.NetServer",
                "io.verbatim.metastore.raft.RaftNode", "io.verbatim.exchange.Controller",
                "io.verbatim.config.VerbatimConfig", "io.verbatim.pulsar.PulsarStorage",
                "io.verbatim.runtime.ClusterNode", "io.verbatim.cli.Verbatim", "io.verbatim.examples.Demo")) {
            org.assertj.core.api.Assertions.assertThat(VERBATIM.contain(type)).as(type).isTrue();
        }
    }

    @Test
    void modulesDependOnlyOnTheModulesBelowThem() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("model").definedBy("io.verbatim.model..")
                .layer("budget").definedBy("io.verbatim.budget..")
                .layer("pipeline").definedBy("io.verbatim.pipeline..")
                .layer("layout-store").definedBy("io.verbatim.store..")
                .layer("net").definedBy("io.verbatim.net..")
                .layer("metastore").definedBy("io.verbatim.metastore..")
                .layer("exchange").definedBy("io.verbatim.exchange..")
                .layer("config").definedBy("io.verbatim.config..")
                .layer("pulsar").definedBy("io.verbatim.pulsar..")
                .layer("runtime").definedBy("io.verbatim.runtime..")
                .layer("cli").definedBy("io.verbatim.cli..")
                .layer("examples").definedBy("io.verbatim.examples..")
                .whereLayer("examples").mayNotBeAccessedByAnyLayer()
                .whereLayer("cli").mayOnlyBeAccessedByLayers("examples")
                .whereLayer("runtime").mayOnlyBeAccessedByLayers("cli", "examples")
                .whereLayer("config").mayOnlyBeAccessedByLayers("runtime", "cli", "examples")
                .whereLayer("pulsar").mayOnlyBeAccessedByLayers("runtime", "cli", "examples")
                .whereLayer("exchange").mayOnlyBeAccessedByLayers("config", "runtime", "cli", "examples")
                .whereLayer("metastore").mayOnlyBeAccessedByLayers("runtime", "cli", "examples")
                .whereLayer("layout-store").mayOnlyBeAccessedByLayers("metastore", "exchange", "runtime", "cli",
                        "examples")
                .whereLayer("pipeline").mayOnlyBeAccessedByLayers("config", "pulsar", "runtime", "cli", "examples")
                .whereLayer("budget").mayOnlyBeAccessedByLayers("pipeline", "config", "runtime", "cli", "examples")
                .check(VERBATIM);
    }

    /**
     * The command line uses none of the checks the demo and the tests judge a run by (the tests' own, not the
     * product's), named rather than by package so that the rule holds wherever they live.
     */
    @Test
    void theCommandLineUsesNoTestOracle() {
        noClasses().that().resideInAPackage("io.verbatim.cli..").should().dependOnClassesThat()
                .haveNameMatching("io\\.verbatim\\..*\\.(ReplicationChecks|ReplicationRecorder|DeliveryChecks)(\\$.*)?")
                .check(VERBATIM);
    }

    @Test
    void noPackageDependsOnItselfThroughOthers() {
        slices().matching("io.verbatim.(**)").should().beFreeOfCycles().check(VERBATIM);
    }

    @Test
    void theModelIsPureNoIoNoReactorNoPulsar() {
        noClasses().that().resideInAPackage("io.verbatim.model..").should().dependOnClassesThat()
                .resideInAnyPackage("reactor..", "io.netty..", "org.apache.pulsar..", "java.nio.channels..",
                        "java.net..", "io.micrometer..")
                .check(VERBATIM);
    }

    @Test
    void theNetworkModuleKnowsNoOtherModule() {
        classes().that().resideInAPackage("io.verbatim.net..").should().onlyDependOnClassesThat()
                .resideOutsideOfPackages("io.verbatim.model..", "io.verbatim.pipeline..", "io.verbatim.runtime..",
                        "io.verbatim.metastore..", "io.verbatim.exchange..", "io.verbatim.store..",
                        "io.verbatim.config..", "io.verbatim.budget..", "io.verbatim.pulsar..")
                .check(VERBATIM);
    }
}
