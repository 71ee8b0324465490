"""RLScheduler's shipped trained policies, loaded into the project's kernel network, give their own figures.

``../shared/reference/rlscheduler-models/`` holds the policy weights of RLScheduler's four trained models (Zhang et
al., SC'20) and, in its README, the mean bounded slowdown their own unchanged ``HPCEnv`` gives with each SDSC-SP2 and
Lublin-1 bounded-slowdown model taking the largest logit (argmax) on their 10 test windows of 1,024 jobs (seed 1),
per window rounded to 0.1 and as means rounded to 0.01. Loaded with
:func:`~hdeeprm.agents.kernel_ppo.load_rlscheduler_model` and run on ``hdeeprm/RLScheduler-v0`` over the same windows,
the kernel must give every one of those numbers.
"""
import re

import numpy as np
import pytest

pytest.importorskip("torch")

from hdeeprm.agents.kernel_ppo import load_rlscheduler_model, ragged_numpy, window_bounded_slowdowns  # noqa: E402
from hdeeprm.env.rlscheduler import RLSchedulerEnv  # noqa: E402
from hdeeprm.errors import AgentError  # noqa: E402
from hdeeprm.run.rlscheduler import RLS_NB_WINDOWS, RLS_SEED, RLS_WINDOW_LENGTH  # noqa: E402
from hdeeprm.workload.rlscheduler import read_rlscheduler_swf, sample_starts  # noqa: E402

#: The README's rows: trace label -> (model file, trace file, their ``--batch_job_slice``).
MODELS = {"SDSC-SP2": ("bsld-sdsc_sp2.npz", "SDSC-SP2-1998-4.2-cln.swf.gz", 10_000),
          "Lublin-1": ("bsld-lublin256.npz", "lublin_256.swf", 0)}


def _readme_figures(folder):
    """{(trace label, backfilling): (mean, [per-window values])} as the README lists them."""
    rows = re.findall(r"^- (\S+), (no backfilling|backfilling): ([\d.]+) \(([^)]*)\)",
                      (folder / "README.md").read_text(encoding="utf-8"), flags=re.M)
    return {(label, kind == "backfilling"): (float(mean), [float(v) for v in values.split(",")])
            for label, kind, mean, values in rows}


@pytest.fixture(scope="module")
def models(shared):
    folder = shared / "reference" / "rlscheduler-models"
    if not folder.is_dir():
        pytest.skip(f"RLScheduler's shipped models not found in {folder}")
    return folder


@pytest.mark.parametrize("name", ["bsld-sdsc_sp2.npz", "bsld-lublin256.npz", "utilization-sdsc_sp2.npz",
                                  "utilization-lublin256.npz"])
def test_the_loaded_kernel_gives_their_logits(models, name):
    arrays = np.load(models / name)
    scores, _ = ragged_numpy(load_rlscheduler_model(models / name))
    for observation, logits in zip(arrays["check_observations"], arrays["check_logits"], strict=True):
        np.testing.assert_allclose(scores(observation.astype(np.float64)), logits, rtol=0, atol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("label", list(MODELS))
@pytest.mark.parametrize("backfilling", [False, True])
def test_argmax_on_their_windows_gives_the_figures_their_env_gives(shared, models, label, backfilling):
    mean, per_window = _readme_figures(models)[label, backfilling]
    model, trace_name, first_jobs = MODELS[label]
    path = shared / "traces" / trace_name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    trace = read_rlscheduler_swf(path)
    starts = sample_starts(len(trace), RLS_WINDOW_LENGTH, RLS_NB_WINDOWS, RLS_SEED, first_jobs)
    assert starts == [1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085]   # their draw, both traces
    env = RLSchedulerEnv(trace, length=RLS_WINDOW_LENGTH, backfilling=backfilling, starts=starts)
    scores, _ = ragged_numpy(load_rlscheduler_model(models / model))
    values = window_bounded_slowdowns(env, scores, starts)
    assert [round(v, 1) for v in values] == per_window
    assert round(float(np.mean(values)), 2) == mean


def _bad_files(arrays: dict, tmp_path):
    """(file, expected message tail) for each way a model file can be wrong."""
    def variant(name, **changes):
        np.savez(tmp_path / name, **{k: v for k, v in {**arrays, **changes}.items() if v is not None})
        return tmp_path / name
    whole = tmp_path / "good.npz"
    np.savez(whole, **arrays)
    load_rlscheduler_model(whole)          # the policy's eight arrays alone are a model
    (tmp_path / "cut.npz").write_bytes(whole.read_bytes()[:5000])
    (tmp_path / "empty.npz").write_bytes(b"")
    np.save(tmp_path / "one.npy", arrays["pi.dense.kernel"])
    return [
        (variant("gap.npz", **{"pi.dense_2.bias": None}), r"no array 'pi\.dense_2\.bias' \(it has pi\."),
        (variant("wide.npz", **{"pi.dense_2.bias": np.zeros(9, np.float32)}),
         r"pi\.dense_2\.bias has shape \(9,\), the kernel needs \(8,\)"),
        (variant("flat.npz", **{"pi.dense.kernel": np.zeros((32, 8), np.float32)}),
         r"pi\.dense\.kernel has shape \(32, 8\), the kernel needs \(8, 32\)"),
        (variant("nan.npz", **{"pi.dense_3.bias": np.array([np.nan], np.float32)}),
         r"pi\.dense_3\.bias holds a NaN or an infinity"),
        (variant("text.npz", **{"pi.dense.bias": np.array(["a"] * 32)}),
         r"pi\.dense\.bias has dtype <U1, the kernel needs numbers \(float32\)"),
        (tmp_path / "cut.npz", r"cannot read it as a NumPy \.npz file \(File is not a zip file\)"),
        (tmp_path / "empty.npz", r"cannot read it as a NumPy \.npz file \("),
        (tmp_path / "one.npy", r"a single NumPy array \(\.npy\), not a \.npz archive"),
        (tmp_path / "missing.npz", r"file not found"),
        (tmp_path, r"cannot read it as a NumPy \.npz file \(\[Errno 21\]"),
    ]


def test_a_wrong_model_file_is_named_in_one_line(models, tmp_path):
    arrays = {k: v for k, v in np.load(models / "bsld-sdsc_sp2.npz").items() if k.startswith("pi.")}
    for path, tail in _bad_files(arrays, tmp_path):
        with pytest.raises(AgentError) as info:
            load_rlscheduler_model(path)
        message = str(info.value)
        assert message.startswith(f"RLScheduler model {path}: ") and "\n" not in message, message
        assert re.search(tail, message), (path.name, message)
