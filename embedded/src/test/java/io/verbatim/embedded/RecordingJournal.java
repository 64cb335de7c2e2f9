package io.verbatim.embedded;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A journal in memory for tests: keeps every record; they become durable when the test says {@link #flush}. */
final class RecordingJournal implements Journal {
    private final List<Record> records = new ArrayList<>();
    private final List<LongConsumer> listeners = new CopyOnWriteArrayList<>();
    private final List<Waiter> waiters = new ArrayList<>();
    private long durable;

    private record Waiter(long sequence, Sinks.Empty<Void> sink) {
    }

    @Override
    public synchronized long append(Record record) {
        records.add(record);
        return records.size();
    }

    @Override
    public Mono<Void> durable(long sequence) {
        synchronized (this) {
            if (sequence <= durable) {
                return Mono.empty();
            }
            Sinks.Empty<Void> sink = Sinks.empty();
            waiters.add(new Waiter(sequence, sink));
            return sink.asMono();
        }
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

    /** Makes every record appended so far durable. */
    void flush() {
        long upTo;
        List<Waiter> done = new ArrayList<>();
        synchronized (this) {
            upTo = records.size();
            durable = upTo;
            waiters.removeIf(w -> w.sequence() <= upTo && done.add(w));
        }
        listeners.forEach(l -> l.accept(upTo));
        done.forEach(w -> w.sink().tryEmitEmpty());
    }

    synchronized long durableSequence() {
        return durable;
    }

    /** Records {@code from + 1 .. to} (sequence numbers, from 1). */
    synchronized List<Record> between(long from, long to) {
        return List.copyOf(records.subList((int) from, (int) to));
    }
}
