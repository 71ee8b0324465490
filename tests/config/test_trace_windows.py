"""TraceWindows: an SWF trace read once, any window converted as build_workload converts it."""
from __future__ import annotations

import pytest

from hdeeprm.config.build import build_platform, build_workload
from hdeeprm.config.options import QUICKSTART_PLATFORM, QUICKSTART_WORKLOAD, Options
from hdeeprm.env.job_slot import JobSlotEnv
from hdeeprm.config.trace_windows import TraceWindows
from hdeeprm.errors import OptionsError

from tests.toy import ROOT, TOY_OPTIONS

QUICKSTART = Options().replace(platform_file_path=str(QUICKSTART_PLATFORM), workload_file_path=str(QUICKSTART_WORKLOAD))


def _jobs(workload):
    return [repr(job) for job in workload.jobs]


@pytest.mark.parametrize("changes", [{}, {"actual_work": "tsafrir", "seed": 5, "default_mem": 100.0}])
def test_every_window_equals_the_trace_converted_for_it(changes):
    options = QUICKSTART.replace(**changes)   # workloads/lublin_500_100.swf on platforms/gaia_mini.json
    hierarchy = build_platform(options)
    windows = TraceWindows(options, hierarchy)
    assert windows.nb_records == 500
    for first, count in ((0, 50), (123, 77), (450, 100), (0, None), (499, 1)):
        expected = build_workload(options.replace(first_job=first, nb_jobs=count), hierarchy)
        window = windows.workload(first, count)
        assert _jobs(window) == _jobs(expected)
        assert window.report == expected.report and window.source == expected.source
    if not changes:   # profiles are made once per amount and shared by the windows (immutable; Tsafrir's
        # ratios are drawn per window, so there a job's amount changes from one window to the next)
        assert windows.workload(0, 50).jobs[10].profile is windows.workload(5, 60).jobs[5].profile


def test_an_environment_on_a_window_runs_as_on_the_converted_trace():
    options = QUICKSTART.replace(first_job=200, nb_jobs=40)
    hierarchy = build_platform(options)
    window = TraceWindows(options, hierarchy).workload(200, 40)
    a, b = JobSlotEnv(options, platform=hierarchy, workload=window), JobSlotEnv(options, platform=hierarchy)
    (obs_a, _), (obs_b, _) = a.reset(seed=1), b.reset(seed=1)
    assert (obs_a == obs_b).all()
    done = False
    while not done:
        slot = int(obs_a[:, 4].argmax())
        obs_a, reward_a, done, _, _ = a.step(slot)
        obs_b, reward_b, _, _, _ = b.step(slot)
        assert (obs_a == obs_b).all() and reward_a == reward_b


def test_windows_need_an_swf_trace():
    options = QUICKSTART.replace(workload_file_path=str(ROOT / "examples" / "learning" / "workload.json"),
                                 source=str(TOY_OPTIONS))
    with pytest.raises(OptionsError, match=r"trace windows are cut from an SWF trace .* got .*workload\.json"):
        TraceWindows(options, build_platform(QUICKSTART))


@pytest.mark.slow
def test_windows_of_sdsc_sp2_keep_the_skipped_records_of_their_span(shared):
    """SDSC-SP2 has records without a run time: each window's report counts those of its span."""
    from hdeeprm.config.options import load_options

    options = load_options(ROOT / "examples" / "evaluation" / "sdsc_sp2_128.json")
    hierarchy = build_platform(options)
    windows = TraceWindows(options, hierarchy)
    skipped = 0
    for first in (0, 1, 4095, 20000, 53788):
        expected = build_workload(options.replace(first_job=first, nb_jobs=256), hierarchy)
        window = windows.workload(first, 256)
        assert _jobs(window) == _jobs(expected) and window.report == expected.report
        skipped += sum(count for key, count in window.report.items() if key.startswith("skipped"))
    assert skipped > 0
