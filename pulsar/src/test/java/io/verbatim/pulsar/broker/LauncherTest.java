package io.verbatim.pulsar.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher's pure parts: the READY line and the classpath file, without a broker. */
class LauncherTest {
    @Test
    void theReadyLineGivesBothUrls() {
        assertThat(ReadyLine.parse("VERBATIM-PULSAR-READY serviceUrl=pulsar://127.0.0.1:6650 webUrl=http://127.0.0.1:8080"))
                .contains(new ReadyLine(URI.create("pulsar://127.0.0.1:6650"), URI.create("http://127.0.0.1:8080")));
    }

    @Test
    void anyOtherLineIsNotReady() {
        assertThat(ReadyLine.parse("12:00:00 WARN something")).isEmpty();
        assertThat(ReadyLine.parse("VERBATIM-PULSAR-READY serviceUrl=pulsar://127.0.0.1 webUrl=http://h:1")).isEmpty();
        assertThat(ReadyLine.parse("VERBATIM-PULSAR-READY webUrl=http://h:1 serviceUrl=pulsar://h:2")).isEmpty();
        assertThat(ReadyLine.parse("")).isEmpty();
    }

    @Test
    void theClasspathStartsWithTheModulesOwnClasses(@TempDir Path target) throws Exception {
        Path file = Files.writeString(target.resolve("standalone.classpath"), "/repo/a.jar:/repo/b.jar\n");
        Path main = target.resolve("classes/io/verbatim/pulsar/standalone/StandaloneBroker.class");
        Files.createDirectories(main.getParent());
        Files.write(main, new byte[0]);
        assertThat(LauncherClasspath.read(file))
                .isEqualTo(target.resolve("classes") + File.pathSeparator + "/repo/a.jar:/repo/b.jar");
    }

    @Test
    void elseItsJar(@TempDir Path target) throws Exception {
        Path file = Files.writeString(target.resolve("standalone.classpath"), "/repo/a.jar");
        Path jar = Files.write(target.resolve("verbatim-pulsar-standalone-0.1.0-SNAPSHOT.jar"), new byte[0]);
        assertThat(LauncherClasspath.read(file)).isEqualTo(jar + File.pathSeparator + "/repo/a.jar");
    }

    @Test
    void aClasspathFileWithoutTheModuleBesideItIsRefused(@TempDir Path target) throws Exception {
        Path file = Files.writeString(target.resolve("standalone.classpath"), "/repo/a.jar");
        assertThatThrownBy(() -> LauncherClasspath.read(file))
                .hasMessageContaining(target.resolve("classes").toString())
                .hasMessageContaining("build pulsar-standalone first");
    }

    @Test
    void anEmptyClasspathFileIsRefused(@TempDir Path target) throws Exception {
        Path file = Files.writeString(target.resolve("standalone.classpath"), "\n");
        assertThatThrownBy(() -> LauncherClasspath.read(file)).hasMessageContaining(file + " is empty");
    }

    @Test
    void theOptionsComeFirstThenTheSystemProperty() {
        Path explicit = Path.of("x.classpath");
        assertThat(LauncherClasspath.locate(explicit)).isEqualTo(explicit);
        // surefire sets the property for this module's tests
        assertThat(LauncherClasspath.locate(null).toString()).endsWith("standalone.classpath");
    }
}
