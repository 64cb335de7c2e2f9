package io.verbatim.runtime;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/**
 * The JVM's and the process's meters on a node's registry, Micrometer's standard binders: memory pools
 * and buffers ({@code jvm_memory_*}, {@code jvm_buffer_*}), GC pauses and allocation ({@code jvm_gc_*}),
 * threads, class loading, CPU ({@code process_cpu_usage}, {@code system_cpu_usage}), uptime and file
 * descriptors. Closing removes the GC notification listeners (they would outlive a closed node).
 */
final class ProcessMetrics implements AutoCloseable {
    private final JvmGcMetrics gc = new JvmGcMetrics();

    private ProcessMetrics() {
    }

    static ProcessMetrics bindTo(MeterRegistry registry) {
        ProcessMetrics m = new ProcessMetrics();
        new JvmMemoryMetrics().bindTo(registry);
        m.gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        return m;
    }

    @Override
    public void close() {
        gc.close();
    }
}
