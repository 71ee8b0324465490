"""The options file of ``hdeeprm-launch`` (the original HDeepRM's schema).

An options file is JSON::

    {
      "seed": 2009,                      # int, seeds the workload, the policies and torch
      "nb_resources": 100,               # optional, must equal the platform's cores
      "nb_jobs": 1000,                   # optional, jobs taken from the SWF trace
      "workload_file_path": "trace.swf", # SWF (.swf / .swf.gz) or Batsim JSON (.json)
      "platform_file_path": "gaia.json", # HDeepRM platform JSON
      "pybatsim": {
        "log_level": "WARNING",
        "env": {"objective": "avg_job_slowdown",
                "actions": {"selection": [{"first": ["high_gflops"]}], "void": false},
                "observation": "normal", "queue_sensitivity": 0.05,
                "start_strategy": "head_of_line"},  # | "easy_backfilling" | "conservative_backfilling"
        "agent": {"type": "CLASSIC" | "LEARNING", "policy_pair": "first-high_gflops",
                  "run": "train" | "test", "hidden": 128, "lr": 0.001, "gamma": 0.99}
      },
      "contention": "hdeeprm",           # HDeepRM addition: contention model ("hdeeprm" | "none")
      "clock": "exact",                  # HDeepRM addition: embedded engine's clock ("exact" | "batsim")
      "workload": {"actual_work": "runtime", "first_job": 0, "profile_type": "parallel_homogeneous",
                   "default_mem": 0.0, "enforce_walltime": false,
                   "mem_bw_choices": [4, 8, 12, 16, 20, 24]},  # HDeepRM addition: SWF conversion
      "gpu": {"placement": "best_fit", "ordering": "first",                     # HDeepRM addition: a timed
              "start_strategy": "greedy",  # | "head_of_line" | "easy_backfilling"
              "reference_type": "V100 SXM2 16GB", "precision": "fp32",        # GPU run (platform: a GPU
              "stand_in": "", "share_slowdown": 1.0, "spread_slowdown": 1.0,  # platform JSON or an openb
              "throughput": {"T4": 0.4},                                      # node list; workload: Philly
              "first_job": 0}
    }                                                                         # or an openb pod list)

A ``gpu_jobs`` block (HDeepRM addition) adds the jobs of a GPU trace (a Philly table or an openb pod
list: ``workload_file_path``, ``first_job``, ``nb_jobs``) to a CPU run on a platform whose node types carry
GPUs (``platforms/mixed_cpu_gpu.json``): each asks for its GPUs and its cores (its CPU request, else
``cores_per_gpu`` per GPU, default 4) on one node, scored by ``placement`` (default ``best_fit``), and runs its
duration on ``reference_type`` (default V100 SXM2 16GB) scaled by the GPU's speed
(:mod:`hdeeprm.decision.gpu_binding`, :mod:`hdeeprm.simulation.gpu_model`); the run's start strategy applies to
both kinds of jobs, and backfilling estimates a GPU job's run time as ``estimate`` says: ``"scaled"`` (default,
the GPU replay's: its duration times its GPUs' run-time factor) or ``"requested"`` (its duration as it is).

A ``gpu`` block makes the run a timed GPU replay (:mod:`hdeeprm.run.gpu_launch`); its keys are
those of :class:`~hdeeprm.run.gpu_replay.GpuRunConfig`, whose defaults they keep, plus
``first_job`` (jobs of the trace skipped before the window of ``nb_jobs``).

The trace and platform paths may be registry names (``"pwa:KTH-SP2-1996-2.1-cln"``,
``"philly:derived"``, ``"openb:node_list_gpu_node"``: the shipped examples name the public
traces this way; :mod:`hdeeprm.workload.datasets` resolves them through the user cache, then
the shared folder), use environment variables (``$HDEEPRM_SHARED/traces/KTH.swf.gz``) and
``~``; relative paths are resolved against the options file's folder. Unknown keys
are rejected with the closest valid name. The structure is validated with
``jsonschema``; errors name the file and the key path. Every default lives in
:class:`Options` (the conversion defaults come from
:mod:`hdeeprm.workload.convert`, the names' from their registries), so the
library, the command line and the environment cannot disagree. The
``workload`` block only applies to SWF traces: with a Batsim JSON workload it
is an error (the JSON's jobs carry their own values).
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import logging
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import jsonschema

from hdeeprm.decision.actions import (CORE_POLICIES, JOB_POLICIES, VOID, action_index, action_name,
                                      parse_policy_pair)
from hdeeprm.decision.contention import CONTENTION_MODELS, DEFAULT_CONTENTION_MODEL
from hdeeprm.simulation.kernel import CLOCKS, DEFAULT_CLOCK
from hdeeprm.decision.gpu_binding import GPU_ESTIMATES
from hdeeprm.decision.gpu_manager import GPU_ORDERINGS, GPU_START_STRATEGIES
from hdeeprm.decision.gpu_scoring import placement_policy
from hdeeprm.decision.strategies import DEFAULT_START_STRATEGY, START_STRATEGIES
from hdeeprm.decision.observation import DEFAULT_OBSERVATION, DEFAULT_QUEUE_SENSITIVITY, OBSERVATIONS
from hdeeprm.decision.reward import DEFAULT_OBJECTIVE, OBJECTIVES
from hdeeprm.errors import OptionsError
from hdeeprm.jsontext import decode_json
from hdeeprm.reading import read_text
from hdeeprm.registry import suggest
from hdeeprm.simulation.gpu_model import SPEED_PRECISIONS
from hdeeprm.workload.datasets import DatasetError, resolve_path
from hdeeprm.workload.convert import (ACTUAL_WORK_CHOICES, DEFAULT_ACTUAL_WORK, DEFAULT_ENFORCE_WALLTIME,
                                      DEFAULT_MEM, DEFAULT_MEM_BW_CHOICES, DEFAULT_PROFILE_TYPE,
                                      PROFILE_TYPE_CHOICES)

#: The repository's quickstart inputs (``hdeeprm-launch examples/quickstart.json`` and the
#: Gymnasium environment made without arguments): a 104-core heterogeneous slice of UniLu
#: Gaia and the shipped 500-job Lublin-Feitelson trace.
REPOSITORY = Path(__file__).resolve().parents[2]
QUICKSTART_PLATFORM = REPOSITORY / "platforms" / "gaia_mini.json"
QUICKSTART_WORKLOAD = REPOSITORY / "workloads" / "lublin_500_100.swf"
#: Python logging levels accepted by ``pybatsim.log_level``.
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
#: Largest seed: torch's generator takes a 64-bit unsigned seed (``torch.manual_seed``).
MAX_SEED = 2 ** 64 - 1
#: Agent types of the original schema (``pybatsim.agent.type``).
AGENT_TYPES = ("CLASSIC", "LEARNING")

_SELECTION = {"type": "array", "minItems": 1, "items": {
    "type": "object", "minProperties": 1,
    "propertyNames": {"enum": list(JOB_POLICIES)},
    "additionalProperties": {"type": "array", "minItems": 1, "items": {"enum": list(CORE_POLICIES)}}}}

SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "seed": {"type": "integer", "minimum": 0, "maximum": MAX_SEED},
        "nb_resources": {"type": "integer", "minimum": 1},
        "nb_jobs": {"type": "integer", "minimum": 0},   # 0: an empty window, which warns (README)
        "workload_file_path": {"type": "string"},
        "platform_file_path": {"type": "string"},
        "contention": {"enum": list(CONTENTION_MODELS.names())},
        "clock": {"enum": list(CLOCKS)},
        "pybatsim": {"type": "object", "additionalProperties": False, "properties": {
            "log_level": {"enum": list(LOG_LEVELS)},
            "env": {"type": "object", "additionalProperties": False, "properties": {
                "objective": {"enum": list(OBJECTIVES.names())},
                "actions": {"type": "object", "additionalProperties": False, "properties": {
                    "selection": _SELECTION, "void": {"type": "boolean"}}},
                "observation": {"enum": list(OBSERVATIONS.names())},
                "queue_sensitivity": {"type": "number", "exclusiveMinimum": 0},
                "start_strategy": {"enum": list(START_STRATEGIES.names())},
            }},
            "agent": {"type": "object", "additionalProperties": False, "properties": {
                "type": {"enum": list(AGENT_TYPES)},
                "policy_pair": {"type": "string"},
                "run": {"enum": ["train", "test"]},
                "hidden": {"type": "integer", "minimum": 1},
                "lr": {"type": "number", "exclusiveMinimum": 0},
                "gamma": {"type": "number", "minimum": 0, "maximum": 1},
            }},
        }},
        "workload": {"type": "object", "additionalProperties": False, "properties": {
            "actual_work": {"enum": list(ACTUAL_WORK_CHOICES)},
            "first_job": {"type": "integer", "minimum": 0},
            "profile_type": {"enum": list(PROFILE_TYPE_CHOICES)},
            "default_mem": {"type": "number", "minimum": 0},
            "enforce_walltime": {"type": "boolean"},
            "mem_bw_choices": {"type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0}},
        }},
        "gpu": {"type": "object", "additionalProperties": False, "properties": {
            "placement": {"type": "string", "minLength": 1},
            "ordering": {"enum": list(GPU_ORDERINGS.spellings())},
            "start_strategy": {"enum": list(GPU_START_STRATEGIES)},
            "reference_type": {"type": "string", "minLength": 1},
            "precision": {"enum": list(SPEED_PRECISIONS)},
            "stand_in": {"type": "string"},
            "throughput": {"type": "object", "additionalProperties": {"type": "number", "exclusiveMinimum": 0}},
            "share_slowdown": {"type": "number", "minimum": 1},
            "spread_slowdown": {"type": "number", "minimum": 1},
            "first_job": {"type": "integer", "minimum": 0},
        }},
        "gpu_jobs": {"type": "object", "additionalProperties": False, "required": ["workload_file_path"],
                     "properties": {
            "workload_file_path": {"type": "string", "minLength": 1},
            "first_job": {"type": "integer", "minimum": 0},
            "nb_jobs": {"type": "integer", "minimum": 0},
            "cores_per_gpu": {"type": "integer", "minimum": 1},
            "placement": {"type": "string", "minLength": 1},
            "reference_type": {"type": "string", "minLength": 1},
            "estimate": {"enum": list(GPU_ESTIMATES)},
        }},
    },
}


@dataclass
class Options:
    """Resolved options of one run; every default is written here and nowhere else.

    Attributes:
        workload_file_path: SWF trace or Batsim JSON workload, absolute path [none].
        platform_file_path: HDeepRM platform JSON, absolute path [none].
        seed: Seed of everything random: workload conversion, random policies, torch [0]; 0 to 2**64 - 1.
        nb_resources: Expected number of cores, checked against the platform [not checked].
        nb_jobs: Jobs taken from the workload [all].
        contention: Contention model, a name of
            :data:`~hdeeprm.decision.contention.CONTENTION_MODELS` ["hdeeprm"].
        clock: The embedded engine's clock model, a name of :data:`~hdeeprm.simulation.kernel.CLOCKS`
            ["exact"; "batsim" = Batsim 4.2.1's 6-decimal protocol clock, docs/engine.rst, "Protocol clock"].
        log_level: Level of the ``hdeeprm`` logger set by the command line ["WARNING"].
        objective: Reward objective, a name of :data:`~hdeeprm.decision.reward.OBJECTIVES`
            ["avg_job_slowdown"].
        actions: Action set as full action indices (policy pairs: 0-35 the original's,
            36 = void, 37 and above the pairs with newer policies; see
            :mod:`hdeeprm.decision.actions`) [the original 36 pairs, or the CLASSIC
            agent's single pair].
        observation: Observation type, a name of
            :data:`~hdeeprm.decision.observation.OBSERVATIONS` ["normal"].
        queue_sensitivity: Sensitivity s of the queue-variation observation [0.05].
        start_strategy: Which of the ordered jobs a decision starts, a name of
            :data:`~hdeeprm.decision.strategies.START_STRATEGIES` ["head_of_line"].
        agent_type: "CLASSIC" or "LEARNING" ["CLASSIC"].
        run: "train" or "test" ["test"].
        hidden: Hidden units of learning agents [128].
        lr: Learning rate [0.001].
        gamma: Discount factor [0.99].
        actual_work: "runtime" (SWF field 4) or "tsafrir" ["runtime"].
        first_job: Usable SWF jobs skipped before the selection [0].
        profile_type: Profile of SWF jobs, "parallel_homogeneous" or "delay"
            ["parallel_homogeneous"].
        default_mem: Memory per core in MB when SWF fields 10 and 7 are missing [0 = none].
        mem_bw_choices: Memory bandwidth per core in GB/s drawn uniformly for SWF jobs
            [4, 8, 12, 16, 20, 24, the original HDeepRM's]; [0] = no bandwidth demand.
            Batsim JSON workloads carry their own ``mem_bw`` per job: setting this key
            with one is an error.
        enforce_walltime: Kill SWF jobs that run longer than their requested time [False: as
            the original HDeepRM, the requested time is only the estimate policies see].
        gpu: The ``gpu`` block of a timed GPU run (see the module docstring), as given [None: a CPU run].
        gpu_jobs: The ``gpu_jobs`` block of a mixed CPU + GPU run (see the module docstring), its
            ``workload_file_path`` resolved [None: no GPU job].
        source: The options file ["<options>"].
        given: The option names the file set explicitly (the rest are defaults).
    """

    workload_file_path: str = ""
    platform_file_path: str = ""
    seed: int = 0
    nb_resources: int | None = None
    nb_jobs: int | None = None
    contention: str = DEFAULT_CONTENTION_MODEL
    clock: str = DEFAULT_CLOCK
    log_level: str = "WARNING"
    objective: str = DEFAULT_OBJECTIVE
    actions: list[int] = field(default_factory=lambda: list(range(VOID)))
    observation: str = DEFAULT_OBSERVATION
    queue_sensitivity: float = DEFAULT_QUEUE_SENSITIVITY
    start_strategy: str = DEFAULT_START_STRATEGY
    agent_type: str = "CLASSIC"
    run: str = "test"
    hidden: int = 128
    lr: float = 0.001
    gamma: float = 0.99
    actual_work: str = DEFAULT_ACTUAL_WORK
    first_job: int = 0
    profile_type: str = DEFAULT_PROFILE_TYPE
    default_mem: float = DEFAULT_MEM
    enforce_walltime: bool = DEFAULT_ENFORCE_WALLTIME
    mem_bw_choices: list[float] = field(default_factory=lambda: list(DEFAULT_MEM_BW_CHOICES))
    gpu: dict[str, Any] | None = None
    gpu_jobs: dict[str, Any] | None = None
    source: str = "<options>"
    given: frozenset[str] = frozenset()

    @property
    def action_names(self) -> tuple[str, ...]:
        """The action set by name, in action order (``"first-high_gflops"``, ``"void"``: the agent's table)."""
        return tuple(action_name(a) for a in self.actions)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of the resolved options (written into ``run.json``)."""
        out = asdict(self)
        out["given"] = sorted(self.given)
        for block in ("gpu", "gpu_jobs"):   # a CPU run's run.json stays as it was before GPU runs existed
            if out[block] is None:
                del out[block]
        return out

    def replace(self, **changes: Any) -> Options:
        """A copy with ``changes`` applied (each counted as given).

        Raises:
            OptionsError: an unknown option name (lists the valid ones and the closest).
        """
        names = [f.name for f in fields(self)]
        for name in changes:
            if name not in names:
                raise OptionsError(f"unknown option '{name}' ({suggest(name, names)})")
        return dataclasses.replace(self, **changes, given=self.given | frozenset(changes))


#: Where each option lives in the options file (JSON key path -> :class:`Options` field).
_KEY_PATHS: dict[tuple[str, ...], str] = {
    ("seed",): "seed", ("nb_resources",): "nb_resources", ("nb_jobs",): "nb_jobs",
    ("workload_file_path",): "workload_file_path", ("platform_file_path",): "platform_file_path",
    ("contention",): "contention", ("clock",): "clock",
    ("pybatsim", "log_level"): "log_level",
    ("pybatsim", "env", "objective"): "objective", ("pybatsim", "env", "observation"): "observation",
    ("pybatsim", "env", "queue_sensitivity"): "queue_sensitivity",
    ("pybatsim", "env", "start_strategy"): "start_strategy",
    ("pybatsim", "agent", "type"): "agent_type", ("pybatsim", "agent", "run"): "run",
    ("pybatsim", "agent", "hidden"): "hidden", ("pybatsim", "agent", "lr"): "lr",
    ("pybatsim", "agent", "gamma"): "gamma",
    ("workload", "actual_work"): "actual_work", ("workload", "first_job"): "first_job",
    ("workload", "profile_type"): "profile_type", ("workload", "default_mem"): "default_mem",
    ("workload", "enforce_walltime"): "enforce_walltime", ("workload", "mem_bw_choices"): "mem_bw_choices",
    ("gpu",): "gpu",
    ("gpu_jobs",): "gpu_jobs",
}
_FLOATS = {"queue_sensitivity", "lr", "gamma", "default_mem"}
_INTS = {"seed", "nb_resources", "nb_jobs", "first_job", "hidden"}
#: Options that only say how an SWF trace is converted (the ``workload`` block).
SWF_CONVERSION_OPTIONS: tuple[str, ...] = tuple(name for path, name in _KEY_PATHS.items()
                                                 if path[0] == "workload")
_MISSING = object()
log = logging.getLogger(__name__)
def _error_message(err: jsonschema.ValidationError, path: str) -> str:
    where = ".".join(str(p) for p in err.absolute_path) or "options"
    if err.validator == "additionalProperties":
        known = list(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(known))
        hints = []
        for key in extra:
            close = difflib.get_close_matches(key, known, n=1)
            hints.append(f"'{key}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
        return f"unknown key {', '.join(hints)} in {where}; valid keys: {', '.join(known)}"
    if err.validator == "enum":
        close = difflib.get_close_matches(str(err.instance), [str(v) for v in err.validator_value], n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return (f"{where} must be one of {', '.join(map(str, err.validator_value))}, "
                f"got {err.instance!r}{hint}")
    if err.validator == "propertyNames":
        return f"{where} has an unknown job-selection policy; valid: {', '.join(JOB_POLICIES)}"
    return f"{where}: {err.message}"


def _resolve_path(value: str, base: Path, name: str, source: str) -> str:
    """An options path made absolute by :func:`~hdeeprm.workload.datasets.resolve_path`.

    A registry name (``"pwa:KTH-SP2-1996-2.1-cln"``) becomes its file; else ``$VARS`` and ``~`` are expanded and
    the path is made relative to ``base``.

    Raises:
        OptionsError: the path names an environment variable that is not set, holds a NUL character (no
            file system accepts one), or a registry name that is unknown or not on this machine.
    """
    if not value:
        return ""
    if "\0" in value:
        raise OptionsError(f"{name} must be a file path, got {value!r} (it holds a NUL character)", path=source)
    try:
        return resolve_path(value, base, name)
    except DatasetError as exc:
        raise OptionsError(str(exc) if str(exc).startswith(f"{name} ") else f"{name}: {exc}", path=source) from None


def parse_options(data: dict[str, Any], source: str = "<options>") -> Options:
    """Validate an options dict and resolve it into :class:`Options`.

    Args:
        data: The decoded JSON.
        source: The file it came from; relative paths are resolved against its folder.

    Raises:
        OptionsError: invalid structure, values, or policy names (naming the key path and file).
    """
    gpu = data.get("gpu") if isinstance(data, dict) else None
    if isinstance(gpu, dict) and "blocking" in gpu:
        raise OptionsError("gpu.blocking was replaced by gpu.start_strategy (a start strategy, as for "
                           "CPU runs): write \"head_of_line\" for true, \"greedy\" for false", path=source)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise OptionsError(_error_message(errors[0], source), path=source)
    base = Path(source).resolve().parent if source != "<options>" else Path.cwd()
    values: dict[str, Any] = {}
    for path, name in _KEY_PATHS.items():
        node: Any = data
        for key in path:
            node = node.get(key, _MISSING) if isinstance(node, dict) else _MISSING
        if node is _MISSING:
            continue
        if name in ("workload_file_path", "platform_file_path"):
            node = _resolve_path(node, base, name, source)
        elif name == "gpu":
            node = dict(node)
        elif name == "gpu_jobs":
            node = {**node, "workload_file_path": _resolve_path(node["workload_file_path"], base,
                                                                "gpu_jobs.workload_file_path", source)}
        elif name == "mem_bw_choices":
            node = [float(x) for x in node]
        elif name in _FLOATS:
            node = float(node)
        elif name in _INTS:
            node = int(node)
        values[name] = node
    for block in ("gpu", "gpu_jobs"):   # a placement name, or weighted names: checked here, before any work
        if "placement" in values.get(block, {}):
            try:
                placement_policy(values[block]["placement"])
            except OptionsError as exc:
                raise OptionsError(f"{block}.placement: {exc}", path=source) from None
    if "gpu" in values and "gpu_jobs" in values:
        raise OptionsError("gpu (a timed GPU replay) and gpu_jobs (GPU jobs beside a CPU trace) exclude each other: "
                           "keep one", path=source)
    opts = Options(**values, source=source, given=frozenset(values))
    env = data.get("pybatsim", {}).get("env", {})
    agent = data.get("pybatsim", {}).get("agent", {})
    actions_opt = env.get("actions", {})
    if "selection" in actions_opt:
        actions = [action_index(job, core) for item in actions_opt["selection"]
                   for job, cores in item.items() for core in cores]
    else:
        actions = list(range(VOID))
    if "policy_pair" in agent:
        try:
            pair = parse_policy_pair(agent["policy_pair"])
        except OptionsError as exc:
            raise OptionsError(f"pybatsim.agent.policy_pair: {exc}", path=source) from None
        if "selection" in actions_opt and actions != [action_index(*pair)]:
            log.warning("pybatsim.agent.policy_pair %r replaces the %d pair(s) of pybatsim.env.actions.selection "
                        "(%s)", agent["policy_pair"], len(actions), source)
        actions = [action_index(*pair)]
    if actions_opt.get("void", False):
        actions.append(VOID)
    opts.actions = actions
    if "actions" in env or "policy_pair" in agent:
        opts.given = opts.given | {"actions"}
    return opts


#: Where each option a sweep or a front end may override lives (:func:`parse_overrides`): the
#: fields of the options file, plus ``policy_pair`` (the CLASSIC agent's pair, setting ``actions``).
OVERRIDE_PATHS: dict[str, tuple[str, ...]] = {**{name: path for path, name in _KEY_PATHS.items()
                                                 if name not in ("gpu", "gpu_jobs")},
                                             "policy_pair": ("pybatsim", "agent", "policy_pair")}


def parse_overrides(changes: dict[str, Any], source: str = "<options>") -> dict[str, Any]:
    """Validate options given by name, as the options file would be, for :meth:`Options.replace`.

    Each value is placed at its key path (:data:`OVERRIDE_PATHS`) and checked with the options
    file's schema (names, types, ranges); paths are resolved against ``source``'s folder.

    Args:
        changes: Option name -> value, e.g. ``{"seed": 3, "start_strategy": "easy_backfilling",
            "policy_pair": "shortest-low_power"}``.
        source: The file the values come from (messages, relative paths).

    Returns:
        The :class:`Options` fields to replace (``policy_pair`` becomes ``actions`` with
        ``agent_type`` ``"CLASSIC"``).

    Raises:
        OptionsError: an unknown name (with the valid ones and the closest) or an invalid value.
    """
    data: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in OVERRIDE_PATHS:
            raise OptionsError(f"unknown option '{name}' ({suggest(name, list(OVERRIDE_PATHS))})", path=source)
        *parents, key = OVERRIDE_PATHS[name]
        node = data
        for parent in parents:
            node = node.setdefault(parent, {})
        node[key] = value
    parsed = parse_options(data, source)
    out: dict[str, Any] = {}
    for name in changes:
        if name == "policy_pair":
            out.update(actions=parsed.actions, agent_type="CLASSIC")
        else:
            out[name] = getattr(parsed, name)
    return out


#: File name endings of traces (SWF, gzip-compressed logs, the GPU tables): such a file given where an options
#: file goes is named as a trace in the error, with where it belongs instead.
TRACE_SUFFIXES: tuple[str, ...] = (".swf", ".gz", ".csv")


def load_options(path: str | Path) -> Options:
    """Read and validate an options file (see the module docstring).

    Raises:
        OptionsError: missing file, not UTF-8, malformed JSON (with its line), a key given twice in
            one object (with the line of the second) or invalid options; a trace (:data:`TRACE_SUFFIXES`) given
            in its place is named as one.
    """
    path = str(path)
    if path.lower().endswith(TRACE_SUFFIXES) and Path(path).is_file():
        raise OptionsError("this is a trace, not an options file (JSON): name it as \"workload_file_path\" in an "
                           "options file (examples/quickstart.json is one)", path=path)
    text = read_text(path, "options file", OptionsError)   # the reading rules: UTF-8, a byte-order mark skipped
    try:
        data = decode_json(text, path, OptionsError)
    except json.JSONDecodeError as exc:
        raise OptionsError(f"malformed JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise OptionsError(f"options must be a JSON object, got {type(data).__name__}", path=path)
    return parse_options(data, path)
