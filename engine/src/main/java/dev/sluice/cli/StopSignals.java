package dev.sluice.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Turns SIGTERM and SIGINT (Ctrl-C) into a clean stop of a run: the first sets {@code stop}, the
 * run takes its final checkpoint and {@code run} returns its exit code — 0 for a clean stop, as
 * orchestrators expect — instead of the JVM's default 143/130. A second signal, or a stop that is
 * not done within {@link #GRACE}, ends the process at once with 128 + the signal number (an
 * unclean stop). Where the JVM does not let us handle the signals (-Xrs), a shutdown hook sets
 * {@code stop} and waits instead; the exit code is then the JVM's.
 */
final class StopSignals implements AutoCloseable {

    static final Duration GRACE = Duration.ofSeconds(30);

    private final AtomicBoolean stop;
    private final String pipeline;
    private final List<Signal> handled = new ArrayList<>();
    private final List<SignalHandler> previous = new ArrayList<>();
    private final java.util.concurrent.CountDownLatch finished = new java.util.concurrent.CountDownLatch(1);
    private Thread hook;

    private StopSignals(AtomicBoolean stop, String pipeline) {
        this.stop = stop;
        this.pipeline = pipeline;
    }

    static StopSignals install(AtomicBoolean stop, String pipeline) {
        StopSignals signals = new StopSignals(stop, pipeline);
        try {
            for (String name : List.of("TERM", "INT")) {
                Signal signal = new Signal(name);
                signals.previous.add(Signal.handle(signal, signals::received));
                signals.handled.add(signal);
            }
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            signals.restore();
            signals.hook = new Thread(
                    () -> {
                        stop.set(true);
                        signals.awaitFinished();
                    },
                    "sluice-shutdown");
            Runtime.getRuntime().addShutdownHook(signals.hook);
        }
        return signals;
    }

    private void received(Signal signal) {
        int code = 128 + signal.getNumber();
        if (stop.getAndSet(true)) {
            System.err.printf("[%s] SIG%s again: exiting without the final checkpoint%n", pipeline, signal.getName());
            Runtime.getRuntime().halt(code);
        }
        Thread.ofPlatform().daemon().name("sluice-stop-watchdog").start(() -> {
            if (!awaitFinished()) {
                System.err.printf(
                        "[%s] the stop after SIG%s did not finish within %d s: exiting without the final checkpoint%n",
                        pipeline, signal.getName(), GRACE.toSeconds());
                Runtime.getRuntime().halt(code);
            }
        });
    }

    private boolean awaitFinished() {
        try {
            return finished.await(GRACE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void restore() {
        for (int i = 0; i < handled.size(); i++) {
            Signal.handle(handled.get(i), previous.get(i));
        }
        handled.clear();
        previous.clear();
    }

    /** The run is over (stopped, completed or failed): signals get their default handling back. */
    @Override
    public void close() {
        finished.countDown();
        restore();
        if (hook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook is running: it waits for `finished`, counted down above.
            }
        }
    }
}
