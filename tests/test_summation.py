"""left_sum adds left to right on every Python version (Python 3.12's sum() compensates rounding)."""
import math

from hdeeprm.summation import left_sum


def test_floats_are_added_left_to_right_with_a_rounding_after_each_addition():
    # 1e16 + 1 rounds back to 1e16 (the ulp there is 2), so left to right gives 0; a compensated
    # sum (Python 3.12's sum(), math.fsum) keeps the 1
    assert left_sum([1e16, 1.0, -1e16]) == 0.0
    assert math.fsum([1e16, 1.0, -1e16]) == 1.0
    assert left_sum([0.1] * 10) == 0.9999999999999999   # ten additions, each rounded


def test_it_takes_any_iterable_and_a_start_and_sums_ints_exactly():
    assert left_sum(x / 4 for x in range(5)) == 2.5
    assert left_sum([], 3) == 3 and left_sum([]) == 0
    assert left_sum([2**60, 1, 1]) == 2**60 + 2
