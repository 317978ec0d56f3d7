package dev.sluice.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The sampling cap: never more rows than configured in a window, whatever the batch rate. */
class RowSamplesTest {

    private static final long SECOND = 1_000_000_000L;

    /** Rows reserved at each time, for the window check. */
    private record Take(long atNanos, int rows) {}

    @Test
    void aWindowNeverHoldsMoreThanTheCapAndTakesSpreadOverIt() {
        RowSamples samples = new RowSamples(15, 30 * SECOND);
        List<Take> takes = new ArrayList<>();
        Random random = new Random(7);
        long now = 5 * SECOND;
        for (int batch = 0; batch < 200_000; batch++) { // ~10 minutes of batches every 0–6 ms
            now += random.nextInt(6_000_000);
            int rows = samples.reserve(now);
            if (rows > 0) {
                takes.add(new Take(now, rows));
            }
        }
        // Windows of 30 s from the first take hold at most 15 rows (the cap) and, with batches this
        // frequent, exactly 15.
        java.util.Map<Long, Integer> perWindow = new java.util.TreeMap<>();
        long first = takes.getFirst().atNanos;
        for (Take take : takes) {
            perWindow.merge((take.atNanos - first) / (30 * SECOND), take.rows, Integer::sum);
        }
        List<Integer> counts = new ArrayList<>(perWindow.values());
        assertTrue(counts.size() >= 19, "about 10 minutes of 30 s windows: " + perWindow);
        assertTrue(counts.getLast() <= 15, "the last (partial) window: " + perWindow);
        counts.subList(0, counts.size() - 1).forEach(rows -> assertEquals(15, rows, "rows per window: " + perWindow));
        // Spread: 3 rows at a time, 5 takes per window, not all at its start.
        assertTrue(takes.stream().allMatch(t -> t.rows == 3), "3 rows per take");
        assertTrue(takes.get(1).atNanos - takes.get(0).atNanos >= 6 * SECOND - 6_000_000, "takes ~6 s apart");
        assertEquals(takes.stream().mapToLong(Take::rows).sum(), samples.reserved());
    }

    @Test
    void slowBatchesTakeWhatTheyCanAndZeroDisablesSampling() {
        RowSamples samples = new RowSamples(4, SECOND);
        assertEquals(3, samples.reserve(0));
        assertEquals(0, samples.reserve(SECOND / 4), "the next take is half a window later (2 takes per window)");
        assertEquals(1, samples.reserve(SECOND / 2), "the rest of the cap");
        assertEquals(0, samples.reserve(SECOND - 1), "the window is full");
        assertEquals(3, samples.reserve(SECOND + 5), "a new window");
        // A long pause: the next window starts at a multiple of the window, so a take half-way
        // through it leaves no room for a second one before the window ends.
        assertEquals(3, samples.reserve(10 * SECOND + SECOND / 2));
        assertEquals(0, samples.reserve(10 * SECOND + SECOND - 1));
        assertEquals(3, samples.reserve(11 * SECOND));
        RowSamples off = new RowSamples(0, SECOND);
        for (long t = 0; t < 100 * SECOND; t += SECOND / 10) {
            assertEquals(0, off.reserve(t));
        }
    }

    @Test
    void keepsTheLastRowsWithIncreasingSequenceNumbers() {
        RowSamples samples = new RowSamples(4, SECOND);
        samples.add(List.of("a", "b", "c"), 1);
        samples.add(List.of("d", "e"), 2);
        assertEquals(
                List.of("b", "c", "d", "e"),
                samples.since(0).stream().map(RowSamples.Row::json).toList());
        assertEquals(
                List.of(4L, 5L),
                samples.since(3).stream().map(RowSamples.Row::seq).toList());
    }

    @Test
    void lanesAskingTogetherStayUnderTheCap() throws Exception {
        RowSamples samples = new RowSamples(15, 3600 * SECOND); // one window for the whole test
        ConcurrentLinkedQueue<Integer> reserved = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> lanes = new ArrayList<>();
        for (int lane = 0; lane < 4; lane++) {
            lanes.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                // Far apart in time, so only the cap limits what they get.
                for (long t = 0; t < 3600 * SECOND; t += 10 * SECOND) {
                    int rows = samples.reserve(t);
                    if (rows > 0) {
                        reserved.add(rows);
                    }
                }
            }));
        }
        go.countDown();
        for (Thread lane : lanes) {
            lane.join();
        }
        assertEquals(15, reserved.stream().mapToInt(Integer::intValue).sum());
    }
}
