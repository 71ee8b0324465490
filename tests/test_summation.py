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


def _compensated(values, start=0):
    """A float sum that compensates rounding (as Python 3.12's sum() does; math.fsum rounds once, at the end)."""
    values = list(values)
    if all(isinstance(v, int) for v in (start, *values)):
        return _BUILTIN_SUM(values, start)
    return math.fsum([start, *values])


_BUILTIN_SUM = sum


def test_a_run_writes_the_same_bytes_whatever_sum_the_python_version_has(tmp_path, monkeypatch):
    """The quickstart run with the builtin sum() made compensated: its energies, jobs and metrics are unchanged."""
    import builtins

    from hdeeprm.cli.launch import main
    from tests.toy import ROOT
    options = str(ROOT / "examples" / "quickstart.json")
    assert main([options, "-o", str(tmp_path / "plain"), "-q"]) == 0
    monkeypatch.setattr(builtins, "sum", _compensated)
    assert main([options, "-o", str(tmp_path / "compensated"), "-q"]) == 0
    monkeypatch.undo()
    for name in ("out_consumed_energy.csv", "out_jobs.csv", "out_metrics.json", "episodes.csv"):
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "compensated" / name).read_bytes(), name
