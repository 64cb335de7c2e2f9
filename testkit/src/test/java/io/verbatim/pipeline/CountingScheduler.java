package io.verbatim.pipeline;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/** A scheduler that counts the tasks given to it and runs them on another. */
final class CountingScheduler implements Scheduler {
    private final Scheduler delegate;
    private final AtomicInteger tasks;

    CountingScheduler(Scheduler delegate, AtomicInteger tasks) {
        this.delegate = delegate;
        this.tasks = tasks;
    }

    @Override
    public Disposable schedule(Runnable task) {
        tasks.incrementAndGet();
        return delegate.schedule(task);
    }

    @Override
    public long now(TimeUnit unit) {
        return delegate.now(unit);
    }

    @Override
    public Worker createWorker() {
        Worker worker = delegate.createWorker();
        return new Worker() {
            @Override
            public Disposable schedule(Runnable task) {
                tasks.incrementAndGet();
                return worker.schedule(task);
            }

            @Override
            public void dispose() {
                worker.dispose();
            }

            @Override
            public boolean isDisposed() {
                return worker.isDisposed();
            }
        };
    }
}
