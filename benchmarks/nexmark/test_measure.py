"""Unit tests of measure.steady_window (run by ci/test.sh)."""
import unittest

import measure


def run_with(samples):
    run = measure.Run(command=[])
    run.samples = samples
    return run


class SteadyWindowTest(unittest.TestCase):

    def test_rates_over_the_middle_of_the_bytes_read(self):
        # 1 s of start-up reading 100 bytes on 2 CPU-seconds, then 1 000 bytes per second on 1.5
        # CPU-seconds per second: the window (bytes 20 %..80 % of 10 100) sees only the steady part.
        samples = [[0.1 * i, 0.2 * i, 10 * i] for i in range(11)]
        samples += [[1 + 0.1 * i, 2 + 0.15 * i, 100 + 100 * i] for i in range(1, 101)]
        steady = measure.steady_window(run_with(samples), events=1_000_000)
        share = steady["share"]
        self.assertAlmostEqual(share, 0.6, delta=0.02)
        self.assertAlmostEqual(steady["events_per_s"], 1_000_000 * share / (share * 10_100 / 1000), delta=2_000)
        self.assertAlmostEqual(steady["events_per_s"] / steady["events_per_cpu_s"], 1.5, delta=0.02)

    def test_too_few_samples_give_none(self):
        self.assertIsNone(measure.steady_window(run_with([[0, 0, 0], [1, 1, 10]]), events=10))


if __name__ == "__main__":
    unittest.main()
