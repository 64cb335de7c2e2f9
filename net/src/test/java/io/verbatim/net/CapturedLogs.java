package io.verbatim.net;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.AbstractLogger;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * An SLF4J provider for tests that keeps the last {@value #KEPT} lines at INFO and above in memory, from
 * every logger of the JVM (Reactor's, Reactor Netty's and Netty's go through SLF4J too), so that a test can
 * say what a port logged: how many lines, at which level, with or without a stack trace. A module's tests
 * use it with the system property {@code slf4j.provider=io.verbatim.net.CapturedLogs} (set in its surefire
 * configuration), which SLF4J takes over any provider on the class path.
 */
public final class CapturedLogs implements SLF4JServiceProvider {
    private static final int KEPT = 10_000;
    private static final Deque<Line> LINES = new ArrayDeque<>();

    /** One logged line: its level, logger, formatted message and the throwable logged with it, if any. */
    public record Line(Level level, String logger, String message, @Nullable String trace) {
        /** The line as a log would show it, the trace included. */
        @Override
        public String toString() {
            return level + " " + logger + " - " + message + (trace == null ? "" : "\n" + trace);
        }
    }

    /** Forgets what was logged so far. */
    public static void clear() {
        synchronized (LINES) {
            LINES.clear();
        }
    }

    /** What was logged since the last {@link #clear()}, oldest first. */
    public static List<Line> lines() {
        synchronized (LINES) {
            return List.copyOf(LINES);
        }
    }

    /** The lines that match {@code which}. */
    public static List<Line> lines(Predicate<Line> which) {
        return lines().stream().filter(which).toList();
    }

    private static void add(Line line) {
        synchronized (LINES) {
            if (LINES.size() == KEPT) {
                LINES.removeFirst();
            }
            LINES.addLast(line);
        }
    }

    private final ILoggerFactory factory = Captured::new;
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
    }

    /** A logger that keeps INFO and above. */
    private static final class Captured extends AbstractLogger {
        private static final long serialVersionUID = 1L;

        Captured(String name) {
            this.name = name;
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                Throwable throwable) {
            String message = MessageFormatter.basicArrayFormat(pattern, arguments);
            String trace = null;
            if (throwable != null) {
                StringWriter w = new StringWriter();
                throwable.printStackTrace(new PrintWriter(w));
                trace = w.toString();
            }
            add(new Line(level, name, message, trace));
        }

        @Override
        public boolean isTraceEnabled() {
            return false;
        }

        @Override
        public boolean isTraceEnabled(Marker marker) {
            return false;
        }

        @Override
        public boolean isDebugEnabled() {
            return false;
        }

        @Override
        public boolean isDebugEnabled(Marker marker) {
            return false;
        }

        @Override
        public boolean isInfoEnabled() {
            return true;
        }

        @Override
        public boolean isInfoEnabled(Marker marker) {
            return true;
        }

        @Override
        public boolean isWarnEnabled() {
            return true;
        }

        @Override
        public boolean isWarnEnabled(Marker marker) {
            return true;
        }

        @Override
        public boolean isErrorEnabled() {
            return true;
        }

        @Override
        public boolean isErrorEnabled(Marker marker) {
            return true;
        }
    }
}
