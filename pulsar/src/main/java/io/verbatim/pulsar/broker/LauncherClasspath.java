package io.verbatim.pulsar.broker;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The broker's classpath: pulsar-standalone's own classes (its {@code target/classes}, else its jar beside the
 * classpath file) followed by the dependencies its build wrote to {@code target/standalone.classpath}.
 */
final class LauncherClasspath {
    static final String PROPERTY = "verbatim.pulsar.classpath";
    static final String ENV = "VERBATIM_PULSAR_CLASSPATH";
    private static final String MAIN_CLASS_FILE = "io/verbatim/pulsar/standalone/StandaloneBroker.class";

    private LauncherClasspath() {
    }

    /**
     * The classpath file named by {@code fromOptions}, else the system property {@value #PROPERTY}, else the
     * environment variable {@value #ENV}; an error naming all three when none is set.
     */
    static Path locate(@Nullable Path fromOptions) {
        if (fromOptions != null) {
            return fromOptions;
        }
        String property = System.getProperty(PROPERTY);
        if (property != null && !property.isBlank()) {
            return Path.of(property);
        }
        String env = System.getenv(ENV);
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        throw new IllegalStateException("no classpath for the Pulsar broker: set Options.classpathFile, the system"
                + " property " + PROPERTY + " or the environment variable " + ENV
                + " to pulsar-standalone/target/standalone.classpath, which building pulsar-standalone writes"
                + " (mvn -pl pulsar-standalone -am package -DskipTests)");
    }

    /** The full classpath from {@code file}; errors name the file and what is missing. */
    static String read(Path file) {
        Path absolute = file.toAbsolutePath().normalize();
        if (!Files.isRegularFile(absolute)) {
            throw new IllegalArgumentException("the Pulsar broker's classpath file " + absolute
                    + " does not exist: build pulsar-standalone first (mvn -pl pulsar-standalone -am package"
                    + " -DskipTests)");
        }
        String dependencies;
        try {
            dependencies = Files.readString(absolute).trim();
        } catch (IOException e) {
            throw new UncheckedIOException("reading the Pulsar broker's classpath file " + absolute, e);
        }
        if (dependencies.isEmpty()) {
            throw new IllegalArgumentException("the Pulsar broker's classpath file " + absolute + " is empty");
        }
        return ownClasses(absolute) + File.pathSeparator + dependencies;
    }

    private static Path ownClasses(Path classpathFile) {
        Path dir = classpathFile.getParent();
        if (dir == null) {
            throw new IllegalArgumentException("the Pulsar broker's classpath file " + classpathFile
                    + " has no directory beside it for pulsar-standalone's classes");
        }
        Path classes = dir.resolve("classes");
        if (Files.isRegularFile(classes.resolve(MAIN_CLASS_FILE))) {
            return classes;
        }
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> jars = files.filter(p -> p.getFileName().toString().matches("verbatim-pulsar-standalone-.*\\.jar"))
                    .filter(p -> !p.getFileName().toString().endsWith("-tests.jar"))
                    .toList();
            if (jars.size() == 1) {
                return jars.get(0);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("listing " + dir, e);
        }
        throw new IllegalArgumentException("neither " + classes + " (with " + MAIN_CLASS_FILE
                + ") nor one verbatim-pulsar-standalone jar beside " + classpathFile
                + ": build pulsar-standalone first");
    }
}
