package dev.sluice.service;

import ch.qos.logback.classic.Level;
import dev.sluice.observe.Logs;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The last lines one hosted pipeline logged — lifecycle events, its progress lines, errors —
 * numbered from 1 so that a follower ({@code sluice logs --follow}) asks only for what is new.
 * Each line is masked (secrets) before it is kept, and copied to the service's log (or to a
 * stream given instead, for tests).
 */
final class PipelineLog {

    /** One line; {@code seq} grows by one per line, over the pipeline's whole life in this process. */
    record Line(long seq, Instant at, String text) {}

    static final int CAPACITY = 1000;

    private final String pipeline;
    private final PrintStream echo;
    private final ArrayDeque<Line> lines = new ArrayDeque<>();
    private volatile UnaryOperator<String> mask = UnaryOperator.identity();
    private long next = 1;

    PipelineLog(String pipeline, PrintStream echo) {
        this.pipeline = pipeline;
        this.echo = echo;
    }

    /** Masks every later line with {@code mask} (set when a definition is applied). */
    void maskWith(UnaryOperator<String> mask) {
        this.mask = mask;
    }

    /** {@code text} masked as this pipeline's lines are. */
    String mask(String text) {
        return mask.apply(text);
    }

    void add(String text) {
        String masked = mask.apply(text);
        synchronized (this) {
            if (lines.size() == CAPACITY) {
                lines.removeFirst();
            }
            lines.addLast(new Line(next++, Instant.now(), masked));
        }
        if (echo != null) {
            echo.println("[" + pipeline + "] " + masked);
        } else {
            Logs.log(Level.INFO, pipeline, null, masked);
        }
    }

    /** The kept lines with a number above {@code seq}, oldest first. */
    synchronized List<Line> since(long seq) {
        List<Line> newer = new ArrayList<>();
        for (Line line : lines) {
            if (line.seq() > seq) {
                newer.add(line);
            }
        }
        return newer;
    }

    /** A stream whose every printed line becomes a log line (for the progress reporter). */
    PrintStream stream() {
        return Logs.lineStream(pipeline, this::add);
    }
}
