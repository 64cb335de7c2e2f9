package io.verbatim.testkit;

import io.verbatim.embedded.Journal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * An embedded storage's journal in memory whose disk the test drives: it keeps every record, and records
 * become durable only when the test says {@link #flush} (until then, a disk that never finishes). A crash is
 * {@link #durableSequence} (what survived) and {@link #between} (what to replay).
 */
public final class ManualJournal implements Journal {
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
    public synchronized Mono<Void> durable(long sequence) {
        if (sequence <= durable) {
            return Mono.empty();
        }
        Sinks.Empty<Void> sink = Sinks.empty();
        waiters.add(new Waiter(sequence, sink));
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

    /** Makes every record appended so far durable: waiting callers go on, listeners hear of it. */
    public void flush() {
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

    /** The sequence number of the last durable record (0 before the first flush): what a crash keeps. */
    public synchronized long durableSequence() {
        return durable;
    }

    /** Records {@code from + 1 .. to} (sequence numbers count from 1). */
    public synchronized List<Record> between(long from, long to) {
        return List.copyOf(records.subList((int) from, (int) to));
    }
}
