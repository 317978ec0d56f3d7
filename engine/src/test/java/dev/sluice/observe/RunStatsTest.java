package dev.sluice.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The run's clock: it runs until the run ends, then stays where the run ended. */
class RunStatsTest {

    @Test
    void elapsedStopsWhereTheRunEnded() throws InterruptedException {
        RunStats stats = new RunStats(List.of("in", "out"), List.of("in"), List.of("out"), 0, 1);
        double running = stats.elapsedSeconds();
        Thread.sleep(5);
        assertTrue(stats.elapsedSeconds() > running, "the clock runs during the run");
        stats.finished();
        double ended = stats.elapsedSeconds();
        Thread.sleep(5);
        assertEquals(ended, stats.elapsedSeconds(), "the summary's printing is not the run's time");
        stats.finished(); // a second call (a lane after the first) keeps the first end
        assertEquals(ended, stats.elapsedSeconds());
    }
}
