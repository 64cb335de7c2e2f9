package io.verbatim.metadatalog.transport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What Netty logs at WARNING or above while open. With slf4j-nop on the test class path Netty logs
 * through java.util.logging, so its "exception reached the tail of the pipeline" warnings land here.
 */
final class NettyLogs extends Handler implements AutoCloseable {
    final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Logger root = Logger.getLogger("");

    NettyLogs() {
        setLevel(Level.WARNING);
        root.addHandler(this);
    }

    @Override
    public void publish(LogRecord record) {
        if (record.getLevel().intValue() >= Level.WARNING.intValue() && record.getLoggerName() != null
                && record.getLoggerName().startsWith("io.netty")) {
            records.add(record);
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        root.removeHandler(this);
    }
}
