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
                "observation": "normal", "queue_sensitivity": 0.05},
        "agent": {"type": "CLASSIC" | "LEARNING", "policy_pair": "first-high_gflops",
                  "run": "train" | "test", "hidden": 128, "lr": 0.001, "gamma": 0.99}
      },
      "workload": {"actual_work": "runtime", "first_job": 0, "profile_type": "parallel_homogeneous",
                   "default_mem": 0.0, "enforce_walltime": false}   # HDeepRM addition, optional
    }

Relative paths are resolved against the options file's folder. Unknown keys
are rejected with the closest valid name. The structure is validated with
``jsonschema``; errors name the file and the key path.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from hdeeprm.errors import OptionsError
from hdeeprm.decision.policies import CORE_POLICIES, JOB_POLICIES, VOID, action_index, parse_policy_pair

#: Reward objectives (DESIGN section 6).
OBJECTIVES = ("avg_job_slowdown", "avg_job_completion", "avg_utilization", "makespan",
              "energy_consumption", "edp")
#: Observation types (DESIGN section 6).
OBSERVATIONS = ("normal", "small", "minimal")

_SELECTION = {"type": "array", "minItems": 1, "items": {
    "type": "object", "minProperties": 1,
    "propertyNames": {"enum": list(JOB_POLICIES)},
    "additionalProperties": {"type": "array", "minItems": 1, "items": {"enum": list(CORE_POLICIES)}}}}

SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "seed": {"type": "integer"},
        "nb_resources": {"type": "integer", "minimum": 1},
        "nb_jobs": {"type": "integer", "minimum": 1},
        "workload_file_path": {"type": "string"},
        "platform_file_path": {"type": "string"},
        "pybatsim": {"type": "object", "additionalProperties": False, "properties": {
            "log_level": {"enum": ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]},
            "env": {"type": "object", "additionalProperties": False, "properties": {
                "objective": {"enum": list(OBJECTIVES)},
                "actions": {"type": "object", "additionalProperties": False, "properties": {
                    "selection": _SELECTION, "void": {"type": "boolean"}}},
                "observation": {"enum": list(OBSERVATIONS)},
                "queue_sensitivity": {"type": "number", "exclusiveMinimum": 0},
            }},
            "agent": {"type": "object", "additionalProperties": False, "properties": {
                "type": {"enum": ["CLASSIC", "LEARNING"]},
                "policy_pair": {"type": "string"},
                "run": {"enum": ["train", "test"]},
                "hidden": {"type": "integer", "minimum": 1},
                "lr": {"type": "number", "exclusiveMinimum": 0},
                "gamma": {"type": "number", "minimum": 0, "maximum": 1},
            }},
        }},
        "workload": {"type": "object", "additionalProperties": False, "properties": {
            "actual_work": {"enum": ["runtime", "tsafrir"]},
            "first_job": {"type": "integer", "minimum": 0},
            "profile_type": {"enum": ["parallel_homogeneous", "delay"]},
            "default_mem": {"type": "number", "minimum": 0},
            "enforce_walltime": {"type": "boolean"},
            "mem_bw_choices": {"type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0}},
        }},
    },
}


@dataclass
class Options:
    """Resolved options of one run (defaults in brackets).

    Attributes:
        seed: Seed of everything random [0].
        nb_resources: Expected number of cores, checked against the platform [None].
        nb_jobs: Jobs taken from an SWF trace, None = all [None].
        workload_file_path: SWF trace or Batsim JSON workload, absolute path.
        platform_file_path: HDeepRM platform JSON, absolute path.
        log_level: Python logging level name ["WARNING"].
        objective: Reward objective, one of :data:`OBJECTIVES` ["avg_job_slowdown"].
        actions: Action set as full action indices (policy pairs, 36 = void)
            [all 36 pairs, or the CLASSIC agent's single pair].
        observation: Observation type, one of :data:`OBSERVATIONS` ["normal"].
        queue_sensitivity: Sensitivity s of the queue-variation observation [0.05].
        agent_type: "CLASSIC" or "LEARNING" ["CLASSIC"].
        run: "train" or "test" ["test"].
        hidden: Hidden units of learning agents [128].
        lr: Learning rate [0.001].
        gamma: Discount factor [0.99].
        actual_work: "runtime" (SWF field 4) or "tsafrir" ["runtime"].
        first_job: Usable SWF jobs skipped before the selection [0].
        profile_type: Profile of SWF jobs, "parallel_homogeneous" or "delay".
        default_mem: Memory per core in MB when SWF fields 10 and 7 are missing [0 = none].
        mem_bw_choices: Memory bandwidth per core in GB/s drawn uniformly for SWF jobs
            [4, 8, 12, 16, 20, 24, the original HDeepRM's]; [0] = no bandwidth demand.
        enforce_walltime: Kill SWF jobs that run longer than their requested time [False: as the
            original HDeepRM, the requested time is only the estimate policies see; contention
            slows jobs down and must not kill them].
        source: The options file.
    """

    workload_file_path: str = ""
    platform_file_path: str = ""
    seed: int = 0
    nb_resources: int | None = None
    nb_jobs: int | None = None
    log_level: str = "WARNING"
    objective: str = "avg_job_slowdown"
    actions: list[int] = field(default_factory=lambda: list(range(VOID)))
    observation: str = "normal"
    queue_sensitivity: float = 0.05
    agent_type: str = "CLASSIC"
    run: str = "test"
    hidden: int = 128
    lr: float = 0.001
    gamma: float = 0.99
    actual_work: str = "runtime"
    first_job: int = 0
    profile_type: str = "parallel_homogeneous"
    default_mem: float = 0.0
    enforce_walltime: bool = False
    mem_bw_choices: list[float] = field(default_factory=lambda: [4.0, 8.0, 12.0, 16.0, 20.0, 24.0])
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of the resolved options (written into the run folder)."""
        return asdict(self)


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


def parse_options(data: dict[str, Any], source: str = "<options>") -> Options:
    """Validate an options dict and resolve it into :class:`Options`.

    Args:
        data: The decoded JSON.
        source: The file it came from; relative paths are resolved against its folder.

    Raises:
        OptionsError: invalid structure, values, or policy names (naming the key path and file).
    """
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise OptionsError(_error_message(errors[0], source), path=source)
    base = Path(source).resolve().parent if source != "<options>" else Path.cwd()
    pyb = data.get("pybatsim", {})
    env = pyb.get("env", {})
    agent = pyb.get("agent", {})
    wl = data.get("workload", {})

    def resolve(p: str) -> str:
        return str((base / p).resolve()) if p else ""

    opts = Options(
        workload_file_path=resolve(data.get("workload_file_path", "")),
        platform_file_path=resolve(data.get("platform_file_path", "")),
        seed=data.get("seed", 0), nb_resources=data.get("nb_resources"), nb_jobs=data.get("nb_jobs"),
        log_level=pyb.get("log_level", "WARNING"),
        objective=env.get("objective", "avg_job_slowdown"),
        observation=env.get("observation", "normal"),
        queue_sensitivity=float(env.get("queue_sensitivity", 0.05)),
        agent_type=agent.get("type", "CLASSIC"), run=agent.get("run", "test"),
        hidden=agent.get("hidden", 128), lr=float(agent.get("lr", 0.001)),
        gamma=float(agent.get("gamma", 0.99)),
        actual_work=wl.get("actual_work", "runtime"), first_job=wl.get("first_job", 0),
        profile_type=wl.get("profile_type", "parallel_homogeneous"),
        default_mem=float(wl.get("default_mem", 0.0)), enforce_walltime=wl.get("enforce_walltime", False),
        mem_bw_choices=[float(x) for x in wl.get("mem_bw_choices", [4, 8, 12, 16, 20, 24])],
        source=source,
    )
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
        actions = [action_index(*pair)]
    if actions_opt.get("void", False):
        actions.append(VOID)
    opts.actions = actions
    return opts


def load_options(path: str | Path) -> Options:
    """Read and validate an options file (see the module docstring).

    Raises:
        OptionsError: missing file, malformed JSON (with its line) or invalid options.
    """
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OptionsError("options file not found", path=path) from None
    except OSError as exc:
        raise OptionsError(f"cannot read options file: {exc.strerror}", path=path) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionsError(f"malformed JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise OptionsError(f"options must be a JSON object, got {type(data).__name__}", path=path)
    return parse_options(data, path)
