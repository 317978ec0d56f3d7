"""Unit tests of the parity normalization (run by ci/test.sh: python3 -m unittest)."""
import unittest

from normalize import normalize_row


def same(a: str, b: str) -> bool:
    return normalize_row(a.encode()) == normalize_row(b.encode())


class NormalizeTest(unittest.TestCase):

    def test_numbers_are_equal_whatever_their_notation(self):
        self.assertTrue(same('{"p": 4092}', '{"p": 4092.0}'))
        self.assertTrue(same('{"p": 2943344.652}', '{"p": 2943344.6520000002}'))
        self.assertFalse(same('{"p": 1.001}', '{"p": 1.002}'))

    def test_a_number_never_equals_a_string(self):
        self.assertFalse(same('{"p": 4092}', '{"p": "4092"}'))
        self.assertFalse(same('{"p": 4092}', '{"p": "4092.000"}'))
        self.assertFalse(same('{"p": [1]}', '{"p": ["1.000"]}'))
        self.assertFalse(same('{"p": {"a": 1}}', '{"p": {"a": "1.000"}}'))

    def test_timestamps_compare_as_instants_and_keep_their_zone(self):
        self.assertTrue(same('{"t": "2015-07-15 00:00:00"}', '{"t": "2015-07-15T00:00:00.000"}'))
        self.assertTrue(same('{"t": "2015-07-15T02:00:00+02:00"}', '{"t": "2015-07-15T00:00:00Z"}'))
        self.assertTrue(same('{"t": "2015-07-15T00:00:00.5Z"}', '{"t": "2015-07-15T00:00:00.500Z"}'))
        self.assertFalse(same('{"t": "2015-07-15T00:00:00"}', '{"t": "2015-07-15T00:00:00Z"}'))
        self.assertFalse(same('{"t": "2015-07-15T00:00:00+01:00"}', '{"t": "2015-07-15T00:00:00Z"}'))

    def test_key_order_does_not_matter_but_values_and_nulls_do(self):
        self.assertTrue(same('{"a": 1, "b": "x"}', '{"b": "x", "a": 1}'))
        self.assertFalse(same('{"a": null}', '{"a": 0}'))
        self.assertFalse(same('{"a": true}', '{"a": 1}'))
        self.assertFalse(same('{"a": "x"}', '{"a": "y"}'))


if __name__ == "__main__":
    unittest.main()
