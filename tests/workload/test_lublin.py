"""Lublin & Feitelson generator: determinism, model statistics, shipped trace."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from hdeeprm.errors import OptionsError
from hdeeprm.workload.generators.lublin import (BATCH, BATCH_PARAMETERS, INTERACTIVE, INTERACTIVE_PARAMETERS,
                                     WHOLE_PARAMETERS, _gamma_cdf, daily_weights,
                                     generate_lublin_swf, iter_lublin, scale_to_machine)
from hdeeprm.workload.swf import read_swf
from tests.workload.trace_paths import SHIPPED


def _array(records):
    return np.array([r.fields for r in records], dtype=float)


def test_same_seed_same_jobs_other_seed_other_jobs():
    a = list(iter_lublin(300, 64, seed=5))
    assert a == list(iter_lublin(300, 64, seed=5))
    assert a != list(iter_lublin(300, 64, seed=6))


def test_records_are_well_formed():
    data = _array(iter_lublin(2000, 100, seed=1))
    assert data[:, 0].tolist() == list(range(1, 2001))
    assert np.all(np.diff(data[:, 1]) >= 0)                  # submitted in order
    assert np.all(data[:, 4] == data[:, 7])                  # allocated = requested size
    assert data[:, 4].min() >= 1 and data[:, 4].max() <= 100
    assert data[:, 3].min() >= 1 and data[:, 3].max() < math.exp(12)
    assert np.all(data[:, 8] == -1) and np.all(data[:, 10] == 1) and np.all(data[:, 14] == -1)


def test_whole_sample_statistics_match_the_model():
    # 20000 jobs on 128 processors: the parameters' own machine size.
    data = _array(iter_lublin(20000, 128, seed=11))
    size, run = data[:, 4].astype(int), data[:, 3]
    serial = np.mean(size == 1)
    assert serial == pytest.approx(WHOLE_PARAMETERS.serial_prob, abs=0.015)
    parallel = size[size > 1]
    pow2 = np.mean((parallel & (parallel - 1)) == 0)
    # power-of-two share among parallel jobs: pow2_prob / (1 - serial_prob) = 0.762, plus the
    # non-power-of-two draws that happen to round to one (sizes 2, 3 -> 2 ...), hence above.
    assert 0.76 < pow2 < 0.85
    # ln(run time) is a hyper-gamma mixture: the median lies between the two gamma medians
    # (e**(4.2*0.94) ~ 52 s and e**(312*0.03) ~ 11,700 s), near the lublin_256 trace's 137 s.
    assert 60 < np.median(run) < 400
    # submissions follow the daily cycle: more in the afternoon than at night
    hours = (data[:, 1] % 86400) // 3600
    assert np.mean((hours >= 12) & (hours < 18)) > 2 * np.mean(hours < 6)


def test_job_types_mark_queues_and_interactive_jobs_are_smaller():
    data = _array(iter_lublin(6000, 128, seed=2, job_types=True))
    queue = data[:, 14]
    assert set(queue.tolist()) == {BATCH, INTERACTIVE}
    assert data[queue == INTERACTIVE, 4].max() <= round(2 ** 5.5)
    assert np.median(data[queue == INTERACTIVE, 3]) < np.median(data[queue == BATCH, 3])


def test_scale_to_machine():
    whole = scale_to_machine(WHOLE_PARAMETERS, 100)
    assert (whole.ulow, whole.umed, whole.uhi) == pytest.approx((0.8, math.log2(100) - 2.5, math.log2(100)))
    assert scale_to_machine(BATCH_PARAMETERS, 128) == BATCH_PARAMETERS  # fitted size: unchanged
    assert scale_to_machine(INTERACTIVE_PARAMETERS, 128) == INTERACTIVE_PARAMETERS
    tiny = scale_to_machine(BATCH_PARAMETERS, 2)
    assert (tiny.ulow, tiny.umed, tiny.uhi) == (1.0, 1.0, 1.0)
    assert {r.allocated_processors for r in iter_lublin(200, 1, seed=0)} == {1}


def test_gamma_cdf_and_daily_weights():
    assert _gamma_cdf(2.0, 1.0, 1.0) == pytest.approx(1 - math.exp(-2.0), rel=1e-12)
    assert _gamma_cdf(3.0, 2.0, 1.5) == pytest.approx(1 - 3 * math.exp(-2.0), rel=1e-12)
    weights = daily_weights(BATCH_PARAMETERS)
    assert weights.shape == (48,) and weights.mean() == pytest.approx(1.0)
    assert 20 <= int(np.argmax(weights)) <= 34  # peak between 10:00 and 17:30


def test_bad_arguments():
    with pytest.raises(OptionsError, match=f"^{re.escape('nb_cores must be >= 1, got 0')}$"):
        iter_lublin(10, 0)
    with pytest.raises(OptionsError, match=f"^{re.escape('nb_jobs must be >= 0, got -1')}$"):
        iter_lublin(-1, 8)


def test_shipped_trace_is_reproducible(tmp_path):
    out = tmp_path / "again.swf"
    assert generate_lublin_swf(out, 500, 100, seed=20260101) == 500
    assert out.read_bytes() == SHIPPED.read_bytes()
    header, records = read_swf(SHIPPED)
    assert header.max_procs == 100 and header.get_int("MaxJobs") == 500
    assert header.fields["Conversion"] == "hdeeprm.workload.generators.lublin (seed 20260101)"
    assert len(records) == 500
    assert 20_000 < SHIPPED.stat().st_size < 80_000
