"""Unit tests of nexmark.round_order (run by ci/test.sh)."""
import unittest
from collections import Counter

from nexmark import round_order


class RoundOrderTest(unittest.TestCase):

    def test_every_engine_takes_every_position_equally_often(self):
        engines = ["Sluice FFM", "Sluice JNI", "DataFusion alone"]
        positions = Counter()
        for repeat in range(1, 7):
            order = round_order(engines, repeat)
            self.assertEqual(sorted(order), sorted(engines))
            positions.update((engine, i) for i, engine in enumerate(order))
        self.assertEqual(set(positions.values()), {2})
        self.assertEqual(len(positions), 9)

    def test_the_first_round_keeps_the_given_order(self):
        self.assertEqual(round_order(("a", "b"), 1), ["a", "b"])
        self.assertEqual(round_order(("a", "b"), 2), ["b", "a"])

    def test_no_engines_give_no_round(self):
        self.assertEqual(round_order([], 3), [])


if __name__ == "__main__":
    unittest.main()
