package io.verbatim.examples;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.properties.HasName;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * The house's rules, stated once so that a change cannot break them unseen (issue 24): each module's arrows point
 * one way, no package depends on itself through others, the model is pure, nothing below the command line
 * ({@code cli}) knows it but the examples, nothing knows the examples, and no test oracle ships below the examples
 * (the test kit is for tests and the demo). Production classes only; each module is its package root
 * ({@code layout-store} is {@code store}).
 */
class ArchitectureTest {
    private static final JavaClasses VERBATIM = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("-tests.jar")) // the modules' test jars
            .importPackages("io.verbatim");

    /** The rules below see every module (none passes for having read nothing). */
    @Test
    void everyModuleIsRead() {
        for (String type : List.of("io.verbatim.model.Layout", "io.verbatim.budget.BrokerBudget",
                "io.verbatim.pipeline.SegmentReplicator", "io.verbatim.embedded.MemorySegments",
                "io.verbatim.testkit.ReplicationChecks", "io.verbatim.layoutstore.LayoutStore", "io.verbatim.net.NetServer",
                "io.verbatim.metadatalog.raft.RaftNode", "io.verbatim.exchange.Controller",
                "io.verbatim.config.VerbatimConfig", "io.verbatim.pulsar.PulsarStorage",
                "io.verbatim.runtime.ClusterNode", "io.verbatim.runtime.controller.ControllerReplicaNode",
                "io.verbatim.runtime.broker.Broker", "io.verbatim.runtime.storage.LocalStorage",
                "io.verbatim.runtime.status.NodeStatus", "io.verbatim.cli.Verbatim", "io.verbatim.examples.Demo")) {
            Assertions.assertThat(VERBATIM.contain(type)).as(type).isTrue();
        }
    }

    @Test
    void modulesDependOnlyOnTheModulesBelowThem() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("model").definedBy("io.verbatim.model..")
                .layer("budget").definedBy("io.verbatim.budget..")
                .layer("pipeline").definedBy("io.verbatim.pipeline..")
                .layer("embedded").definedBy("io.verbatim.embedded..")
                .layer("testkit").definedBy("io.verbatim.testkit..")
                .layer("layout-store").definedBy("io.verbatim.layoutstore..")
                .layer("net").definedBy("io.verbatim.net..")
                .layer("metadata-log").definedBy("io.verbatim.metadatalog..")
                .layer("exchange").definedBy("io.verbatim.exchange..")
                .layer("config").definedBy("io.verbatim.config..")
                .layer("pulsar").definedBy("io.verbatim.pulsar..")
                .layer("runtime").definedBy("io.verbatim.runtime..")
                .layer("cli").definedBy("io.verbatim.cli..")
                .layer("examples").definedBy("io.verbatim.examples..")
                .whereLayer("examples").mayNotBeAccessedByAnyLayer()
                .whereLayer("cli").mayOnlyBeAccessedByLayers("examples")
                .whereLayer("runtime").mayOnlyBeAccessedByLayers("cli", "examples")
                .whereLayer("testkit").mayOnlyBeAccessedByLayers("examples") // the demo checks its run; nothing else
                .whereLayer("embedded").mayOnlyBeAccessedByLayers("testkit", "runtime", "cli", "examples")
                .whereLayer("config").mayOnlyBeAccessedByLayers("runtime", "cli", "examples")
                .whereLayer("pulsar").mayOnlyBeAccessedByLayers("runtime", "cli", "examples")
                .whereLayer("exchange").mayOnlyBeAccessedByLayers("config", "runtime", "cli", "examples")
                .whereLayer("metadata-log").mayOnlyBeAccessedByLayers("runtime", "cli", "examples")
                .whereLayer("layout-store").mayOnlyBeAccessedByLayers("metadata-log", "exchange", "runtime", "cli",
                        "examples")
                .whereLayer("pipeline").mayOnlyBeAccessedByLayers("config", "pulsar", "embedded", "testkit", "runtime",
                        "cli", "examples")
                .whereLayer("budget").mayOnlyBeAccessedByLayers("pipeline", "config", "embedded", "testkit", "runtime",
                        "cli", "examples")
                .check(VERBATIM);
    }

    /**
     * The runtime in rooms: the process shell ({@code io.verbatim.runtime}: {@code ClusterNode}, {@code Node},
     * {@code EmbeddedRuntime}, the status page) wires a controller room (admin and delegation endpoints, the replica
     * process, operations, the policy loop, GC), a broker room (brokers, subscriptions, the producer, load, ingest
     * and sessions, remotes) and a storage room (the storage choice, the journal and state files) over the status
     * documents. No room knows the shell, the broker and storage rooms know no controller, storage knows no other.
     */
    @Test
    void theRuntimesRoomsDependOneWay() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("shell").definedBy("io.verbatim.runtime")
                .layer("controller room").definedBy("io.verbatim.runtime.controller..")
                .layer("broker room").definedBy("io.verbatim.runtime.broker..")
                .layer("storage room").definedBy("io.verbatim.runtime.storage..")
                .layer("status").definedBy("io.verbatim.runtime.status..")
                .whereLayer("shell").mayNotBeAccessedByAnyLayer()
                .whereLayer("controller room").mayOnlyBeAccessedByLayers("shell")
                .whereLayer("broker room").mayOnlyBeAccessedByLayers("shell", "controller room")
                .whereLayer("storage room").mayOnlyBeAccessedByLayers("shell", "controller room", "broker room")
                .whereLayer("status").mayOnlyBeAccessedByLayers("shell", "controller room")
                .check(VERBATIM);
    }

    /** Other modules reach the runtime by its shell, its status documents and the broker's producer and subscriptions. */
    @Test
    void theRuntimesFrontDoorIsItsShell() {
        noClasses().that().resideOutsideOfPackage("io.verbatim.runtime..").should().dependOnClassesThat()
                .resideInAnyPackage("io.verbatim.runtime.controller..", "io.verbatim.runtime.storage..")
                .check(VERBATIM);
        noClasses().that().resideOutsideOfPackage("io.verbatim.runtime..").should().dependOnClassesThat(
                JavaClass.Predicates.resideInAPackage("io.verbatim.runtime.broker..").and(DescribedPredicate.not(
                        HasName.Predicates.nameMatching(
                                "io\\.verbatim\\.runtime\\.broker\\.(Producer|Subscription)(\\$.*)?"))))
                .check(VERBATIM);
    }

    /**
     * The command line uses none of the checks the demo and the tests judge a run by, named rather than by package so
     * that the rule holds wherever they live (the layers above say it of the test kit's package).
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

    /** The Raft core is etcd's shape: no threads, no I/O, no clock, nothing of the storage, transport or driver. */
    @Test
    void theRaftCoreDoesNoIoAndKnowsNoStorage() {
        noClasses().that().resideInAPackage("io.verbatim.metadatalog.raft").should().dependOnClassesThat()
                .resideInAnyPackage("io.verbatim.metadatalog.storage..", "io.verbatim.metadatalog.transport..",
                        "io.verbatim.metadatalog.server..", "io.verbatim.metadatalog.state..", "reactor..", "io.netty..",
                        "java.io..", "java.nio..", "java.net..", "java.util.concurrent..", "java.time..",
                        "io.micrometer..")
                .check(VERBATIM);
    }

    @Test
    void theNetworkModuleKnowsNoOtherModule() {
        classes().that().resideInAPackage("io.verbatim.net..").should().onlyDependOnClassesThat()
                .resideOutsideOfPackages("io.verbatim.model..", "io.verbatim.pipeline..", "io.verbatim.runtime..",
                        "io.verbatim.embedded..", "io.verbatim.testkit..",
                        "io.verbatim.metadatalog..", "io.verbatim.exchange..", "io.verbatim.layoutstore..",
                        "io.verbatim.config..", "io.verbatim.budget..", "io.verbatim.pulsar..")
                .check(VERBATIM);
    }
}
