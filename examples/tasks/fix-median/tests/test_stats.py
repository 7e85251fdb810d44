import unittest

from stats import mean, median


class StatsTest(unittest.TestCase):
    def test_median_of_odd_length(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_median_of_even_length(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_mean_is_unchanged(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)


if __name__ == "__main__":
    unittest.main()
