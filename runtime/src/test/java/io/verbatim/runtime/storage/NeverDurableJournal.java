package io.verbatim.runtime.storage;

import io.verbatim.embedded.Journal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A journal whose records never become durable until the test says {@link #flush} (a disk that never finishes). */
public final class NeverDurableJournal implements Journal {
    private final List<Record> records = new ArrayList<>();
    private final List<LongConsumer> listeners = new CopyOnWriteArrayList<>();
    private final List<Sinks.Empty<Void>> waiting = new ArrayList<>();
    private long durable;

    @Override
    public synchronized long append(Record record) {
        records.add(record);
        return records.size();
    }

    @Override
    public synchronized Mono<Void> durable(long sequence) {
        if (sequence <= durable) {
            return Mono.empty();
        }
        Sinks.Empty<Void> sink = Sinks.empty();
        waiting.add(sink);
        return sink.asMono();
    }

    @Override
    public synchronized long lastSequence() {
        return records.size();
    }

    @Override
    public void onDurable(LongConsumer listener) {
        listeners.add(listener);
    }

    @Override
    public boolean keeps() {
        return true;
    }

    /** Makes everything appended so far durable. */
    public void flush() {
        long upTo;
        List<Sinks.Empty<Void>> done;
        synchronized (this) {
            upTo = records.size();
            durable = upTo;
            done = new ArrayList<>(waiting);
            waiting.clear();
        }
        listeners.forEach(l -> l.accept(upTo));
        done.forEach(Sinks.Empty::tryEmitEmpty);
    }
}
