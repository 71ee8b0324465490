"""Left-to-right sums of floats, the same on every Python version.

Python 3.12 made ``sum()`` of floats compensated (Neumaier's algorithm; "What's New In Python 3.12",
builtins), where Python 3.11 adds left to right, as Batsim's C++ loops and NumPy-free code everywhere
else do. The engine's energies are sums of host wattages, so the same run wrote energies that differed
in their last digits between Python 3.11 and 3.12 (``out_consumed_energy.csv``, ``out_jobs.csv``,
``out_metrics.json``). :func:`left_sum` keeps Python 3.11's order on every version: every output is
the same bytes on all of them.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable
from functools import reduce
from operator import add

if sys.version_info >= (3, 12):
    def left_sum(values: Iterable[float], start: float = 0) -> float:
        """``start + values[0] + values[1] + ...``, added left to right (Python 3.11's ``sum()``).

        Args:
            values: Numbers (floats or ints), any iterable.
            start: The first term (0 by default, as ``sum()``'s).

        Returns:
            The sum, rounded after each addition (IEEE 754 double for floats).
        """
        return reduce(add, values, start)
else:   # Python 3.11: the builtin already adds left to right, at C speed
    left_sum = sum

__all__ = ["left_sum"]
