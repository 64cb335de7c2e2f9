package io.verbatim.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** The sample files of {@code config/samples}, shipped in the jar. */
public final class Samples {
    private Samples() {
    }

    /** The text of the sample {@code name} ({@code demo.yaml}, {@code minimal.yaml}, {@code autoscale.yaml}). */
    public static String text(String name) {
        try (InputStream in = Samples.class.getResourceAsStream("samples/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no sample config named " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The demo's configuration. */
    public static VerbatimConfig demo() {
        return VerbatimConfig.parse(text("demo.yaml"));
    }
}
