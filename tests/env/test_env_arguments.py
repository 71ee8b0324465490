"""Issue 37, item 6: the environments' integer, boolean and list arguments, their bounds and reset options.

Every case goes through ``gymnasium.make`` (or the registered class, for ``reset``) as a user's code would:
a float, a string or a ``bool`` where a count goes, a string or an integer where a switch goes, is one
:class:`~hdeeprm.errors.OptionsError` naming the environment, the argument, the rule and the value;
counts that size a space have an upper bound; ``reset(options=...)`` honours the keys an environment
documents (docs/envs.rst, "Arguments and reset options") and refuses any other, listing them.
"""
from __future__ import annotations

import inspect
import re
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.registration import load_env_creator

import hdeeprm
from hdeeprm.arguments import MAX_SLOTS
from hdeeprm.env.gpu_placement import MAX_NODES
from hdeeprm.errors import OptionsError
from hdeeprm.reading import MAX_GPUS_PER_NODE

CPU = (hdeeprm.ENV_ID, hdeeprm.JOB_SLOT_ENV_ID, hdeeprm.BACKFILL_SLOT_ENV_ID)
PROVISIONING = (hdeeprm.GPU_PROVISIONING_ENV_ID, hdeeprm.GPU_PROVISIONING_V1_ENV_ID)
GPU = (hdeeprm.GPU_PLACEMENT_ENV_ID, hdeeprm.GPU_JOB_SLOT_ENV_ID, *PROVISIONING)
RLS = hdeeprm.RLSCHEDULER_ENV_ID
#: Small, data-free inputs of each environment (the quickstart's first jobs, the generator's scenarios).
SMALL = {**{env_id: {"nb_jobs": 30} for env_id in CPU}, RLS: {"length": 64},
         hdeeprm.GPU_PLACEMENT_ENV_ID: {"scenario": ["easy-gen", "easy-gen-b"]},
         hdeeprm.GPU_JOB_SLOT_ENV_ID: {"scenario": ["easy-gen", "easy-gen-b"]},
         **{env_id: {"task": ["easy-gen", "easy-gen-b"]} for env_id in PROVISIONING}}
#: Every integer argument (count) of each environment.
COUNTS = {hdeeprm.ENV_ID: ("seed", "nb_jobs", "max_steps"),
          hdeeprm.JOB_SLOT_ENV_ID: ("nb_slots", "seed", "nb_jobs", "max_steps"),
          hdeeprm.BACKFILL_SLOT_ENV_ID: ("nb_slots", "seed", "nb_jobs", "max_steps"),
          hdeeprm.GPU_PLACEMENT_ENV_ID: ("nb_jobs", "first_job", "curriculum_episodes", "max_nodes", "gpu_slots",
                                         "max_steps"),
          hdeeprm.GPU_JOB_SLOT_ENV_ID: ("nb_jobs", "first_job", "slots", "max_steps"),
          **{env_id: ("nb_jobs", "first_job", "max_steps") for env_id in PROVISIONING},
          RLS: ("length", "first_jobs")}
#: Every boolean argument (switch) of each environment.
FLAGS = {hdeeprm.ENV_ID: ("void", "action_mask"), hdeeprm.JOB_SLOT_ENV_ID: (),
         hdeeprm.BACKFILL_SLOT_ENV_ID: ("commit",), hdeeprm.GPU_PLACEMENT_ENV_ID: ("curriculum",),
         hdeeprm.GPU_JOB_SLOT_ENV_ID: (), **{env_id: ("curriculum",) for env_id in PROVISIONING},
         RLS: ("backfilling",)}
#: Every list-of-integers argument of each environment (HDeepRM-v0's actions also take names).
LISTS = {hdeeprm.ENV_ID: ("actions",), RLS: ("starts",)}


def _class(env_id: str) -> type:
    return load_env_creator(hdeeprm.ENV_ENTRY_POINTS[env_id])


def _make(env_id: str, **kwargs) -> gymnasium.Env:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # GpuProvisioning-v0 is out of date
        return gymnasium.make(env_id, **{**SMALL[env_id], **kwargs})


def _refused(env_id: str, kwargs: dict, message: str) -> None:
    with pytest.raises(OptionsError, match=f"^{re.escape(f'{env_id}: {message}')}$"):
        _make(env_id, **kwargs)


def test_the_tables_list_every_integer_boolean_and_list_argument():
    """A new int, bool or list argument must join these tables (and so these tests)."""
    for env_id in hdeeprm.ENV_ENTRY_POINTS:
        cls = next(c for c in _class(env_id).__mro__
                   if not any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(c).parameters.values()))
        params = inspect.signature(cls).parameters
        typed = {name for name, p in params.items() if re.search(r"\b(int|bool)\b", str(p.annotation))}
        assert typed == {*COUNTS[env_id], *FLAGS[env_id], *LISTS.get(env_id, ())}, env_id


@pytest.mark.parametrize("env_id, name", [(e, n) for e, names in COUNTS.items() for n in names])
@pytest.mark.parametrize("value", [1.5, 2.0, "3", True, np.float64(4.0), np.bool_(True)])
def test_counts_refuse_floats_strings_and_booleans(env_id, name, value):
    with pytest.raises(OptionsError, match=f"^{re.escape(env_id)}: {name} must be an integer .*, got "
                                           f"{re.escape(repr(value))}$"):
        _make(env_id, **{name: value})


@pytest.mark.parametrize("env_id, name", [(e, n) for e, names in FLAGS.items() for n in names])
@pytest.mark.parametrize("value", ["no", "False", 0, 1, 0.0])
def test_switches_refuse_strings_and_numbers(env_id, name, value):
    optional = " or None" if name == "void" else ""
    _refused(env_id, {name: value}, f"{name} must be True or False{optional}, got {value!r}")


def test_the_reported_edges_are_refused():
    """The issue's two cases: starts=[1.5] replayed window 1, commit='no' meant commit=True."""
    _refused(RLS, {"starts": [1.5]},
             "starts[0] must be an integer in [0, 436] (windows of 64 jobs among 500 kept jobs), got 1.5")
    _refused(hdeeprm.BACKFILL_SLOT_ENV_ID, {"commit": "no"}, "commit must be True or False, got 'no'")


@pytest.mark.parametrize("kwargs, message", [
    ({"starts": 3}, "starts must be a list of integers, got 3"),
    ({"starts": "12"}, "starts must be a list of integers, got '12'"),
    ({"starts": [0, True]}, "starts[1] must be an integer in [0, 436] (windows of 64 jobs among 500 kept jobs), "
                            "got True"),
    ({"starts": np.array([0.0, 1.0])},
     "starts[0] must be an integer in [0, 436] (windows of 64 jobs among 500 kept jobs), got np.float64(0.0)"),
    ({"starts": []}, "starts must hold at least one window start, got []"),
    ({"sjf_filter": 10}, "sjf_filter must be a pair (low, high), got 10"),
    ({"sjf_filter": "ab"}, "sjf_filter must be a pair (low, high), got 'ab'"),
])
def test_rlscheduler_lists_are_lists_of_integers(kwargs, message):
    _refused(RLS, kwargs, message)


@pytest.mark.parametrize("actions, message", [
    ([1.5], "actions[0] must be an integer >= 0, got 1.5"),
    ([7, True], "actions[1] must be an integer >= 0, got True"),
    (7, "actions must be a list of action indices or 'job-core' names, got 7"),
])
def test_action_lists_hold_indices_or_names(actions, message):
    _refused(hdeeprm.ENV_ID, {"actions": actions}, message)


@pytest.mark.parametrize("env_id, name, maximum, what", [
    (hdeeprm.JOB_SLOT_ENV_ID, "nb_slots", MAX_SLOTS, "queued jobs shown"),
    (hdeeprm.BACKFILL_SLOT_ENV_ID, "nb_slots", MAX_SLOTS, "queued jobs shown"),
    (hdeeprm.GPU_JOB_SLOT_ENV_ID, "slots", MAX_SLOTS, "queued jobs shown"),
    (hdeeprm.GPU_PLACEMENT_ENV_ID, "gpu_slots", MAX_GPUS_PER_NODE, "GPUs of one node"),
    (hdeeprm.GPU_PLACEMENT_ENV_ID, "max_nodes", MAX_NODES, "nodes"),
    (RLS, "length", 500, "kept jobs of the trace"),
])
def test_slot_node_and_window_counts_have_an_upper_bound(env_id, name, maximum, what):
    """One above the bound is refused naming it; the bound itself is accepted."""
    low = 1
    optional = " or None" if name == "max_nodes" else ""
    _refused(env_id, {name: maximum + 1},
             f"{name} must be an integer in [{low}, {maximum}] ({what}){optional}, got {maximum + 1}")
    if name != "length":   # a window of the whole trace leaves no start to draw: see the next test
        _make(env_id, **{name: maximum})


def test_rlscheduler_windows_stay_in_the_trace():
    _refused(RLS, {"first_jobs": 501}, "first_jobs must be an integer in [0, 500] (kept jobs of the trace), got 501")
    env = _make(RLS, length=500, starts=[0])
    assert env.reset()[1]["start"] == 0
    _refused(RLS, {"length": 500}, "RLScheduler draws window starts in [500, -1): 500 jobs are too few for windows "
                                   "of 500 jobs")


def test_numpy_integers_and_booleans_are_accepted():
    env = _make(hdeeprm.ENV_ID, nb_jobs=np.int64(30), max_steps=np.int32(5), seed=np.uint8(3), void=np.bool_(True),
                action_mask=np.bool_(False), actions=np.array([1, 7]))
    assert env.unwrapped.max_steps == 5 and env.unwrapped.options.actions == [1, 7, 36]
    env = _make(hdeeprm.BACKFILL_SLOT_ENV_ID, nb_slots=np.int16(4), commit=np.bool_(False))
    assert env.unwrapped.nb_slots == 4 and env.unwrapped.commit is False
    env = _make(RLS, length=np.int64(64), starts=np.array([0, 10]), backfilling=np.bool_(True))
    assert env.unwrapped.starts == [0, 10] and all(type(s) is int for s in env.unwrapped.starts)
    env = _make(hdeeprm.GPU_PLACEMENT_ENV_ID, gpu_slots=np.int64(4), max_nodes=np.int32(40),
                curriculum=np.bool_(True), curriculum_episodes=np.int64(3))
    assert env.observation_space["nodes"].shape == (40, 12)


# ------------------------------------------------------------------ reset(options=...)
def _env(env_id: str, **kwargs) -> gymnasium.Env:
    """The registered class itself (no wrapper between the test and ``reset``)."""
    return _class(env_id)(**{**SMALL[env_id], **kwargs})


def _episode(env: gymnasium.Env, seed: int | None, options, steps: int = 6) -> list:
    """Observations, rewards and infos' scenario or start of ``steps`` steps after ``reset`` (``options`` "absent":
    ``reset`` without the argument)."""
    obs, info = env.reset(seed=seed) if options == "absent" else env.reset(seed=seed, options=options)
    trace = [(obs, info.get("scenario"), info.get("start"))]
    for _ in range(steps):
        mask = info.get("action_mask")
        action = int(np.flatnonzero(mask)[0]) if mask is not None and mask.any() else 0
        obs, reward, term, trunc, info = env.step(action)
        trace.append((obs, reward))
        if term or trunc:
            break
    return trace


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b


@pytest.mark.parametrize("env_id", sorted(hdeeprm.ENV_ENTRY_POINTS))
def test_no_options_and_empty_options_are_a_default_reset(env_id):
    """``options=None`` and ``{}`` give the observations and rewards of a reset without them, seeded or not."""
    runs = []
    for options in ("absent", None, {}):
        env = _env(env_id)
        runs.append([_episode(env, seed, options) for seed in (3, None, None)])
    assert _same(runs[0], runs[1]) and _same(runs[0], runs[2])


@pytest.mark.parametrize("env_id", CPU)
def test_cpu_environments_accept_no_reset_options(env_id):
    env = _env(env_id)
    with pytest.raises(OptionsError, match=f"^{re.escape(env_id)}: this environment accepts no reset options, "
                                           r"got \{'seed': 3\}$"):
        env.reset(options={"seed": 3})
    with pytest.raises(OptionsError, match=f"^{re.escape(env_id)}: reset options must be a dict or None, got 3$"):
        env.reset(options=3)


def test_rlscheduler_replays_the_start_it_is_given_without_taking_a_draw():
    env, plain = _env(RLS), _env(RLS)
    drawn = [plain.reset(seed=5)[1]["start"], plain.reset()[1]["start"]]
    assert env.reset(seed=5)[1]["start"] == drawn[0]
    assert env.reset(options={"start": np.int64(17)})[1]["start"] == 17
    assert env.reset()[1]["start"] == drawn[1]                       # the draws go on as without the chosen start
    assert _same(_episode(env, None, {"start": 17})[1:], _episode(_env(RLS, starts=[17]), None, None)[1:])
    with pytest.raises(OptionsError, match=r"^hdeeprm/RLScheduler-v0: start must be an integer in \[0, 436\] "
                                           r"\(windows of 64 jobs among 500 kept jobs\), got 1.5$"):
        env.reset(options={"start": 1.5})
    with pytest.raises(OptionsError, match=r"^hdeeprm/RLScheduler-v0: unknown reset option 'strat' \(allowed: "
                                           r"start\)$"):
        env.reset(options={"strat": 1})


@pytest.mark.parametrize("env_id", GPU)
def test_gpu_environments_replay_the_scenario_they_are_given_without_a_draw(env_id):
    env, plain = _env(env_id), _env(env_id)
    drawn = [plain.reset(seed=1)[1]["scenario"] for _ in range(1)] + [plain.reset()[1]["scenario"]
                                                                       for _ in range(3)]
    assert env.reset(seed=1)[1]["scenario"] == drawn[0]
    other = "easy-gen-b" if drawn[1] == "easy-gen" else "easy-gen"
    assert env.reset(options={"scenario": other})[1]["scenario"] == other
    assert [env.reset()[1]["scenario"] for _ in range(3)] == drawn[1:]
    with pytest.raises(OptionsError, match=f"^{re.escape(env_id)}: scenario must be one of this environment's "
                                           r"scenarios \(easy-gen, easy-gen-b\), got 'hard-gen'$"):
        env.reset(options={"scenario": "hard-gen"})
    with pytest.raises(OptionsError, match=f"^{re.escape(env_id)}: unknown reset option 'task' "
                                           r"\(allowed: scenario\)$"):
        env.reset(options={"task": "easy"})


def test_a_gpu_environment_on_fixed_inputs_accepts_no_reset_options():
    from hdeeprm.env.gpu_scenarios import GPU_SCENARIOS

    scenario = GPU_SCENARIOS["easy-gen"]
    env = _class(hdeeprm.GPU_JOB_SLOT_ENV_ID)(platform=scenario.cluster(), workload=scenario.jobs())
    with pytest.raises(OptionsError, match=r"^hdeeprm/GpuJobSlot-v0: this environment accepts no reset options, "
                                           r"got \{'scenario': 'easy-gen'\}$"):
        env.reset(options={"scenario": "easy-gen"})
    assert env.reset(options={})[1]["scenario"] == ""
