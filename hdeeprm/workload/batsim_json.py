"""Reader and writer of Batsim JSON workloads (the ``-w`` input of Batsim).

Format (https://batsim.readthedocs.io/en/latest/input-workload.html)::

    {"nb_res": 4,
     "jobs": [{"id": "1", "subtime": 0, "res": 2, "walltime": 60, "profile": "d10"}, ...],
     "profiles": {"d10": {"type": "delay", "delay": 10},
                  "p1": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}

Supported profile types are those the embedded engine simulates: ``delay`` and
``parallel_homogeneous`` with ``com`` = 0 (or absent). Job ids may be strings or integers
(kept as strings). ``walltime`` is optional (-1 = none).

Extra keys of the original HDeepRM are accepted unchanged: profile keys ``req_time`` (the
requested time, in seconds, the scheduler sees: it becomes :attr:`Job.requested_time` when the
job has no walltime; it is *not* a walltime, Batsim ignores it and never kills on it),
``mem`` (MB per core) and ``mem_bw`` (GB/s per core), which are defaults for the jobs of that
profile, and ``req_ops`` (FLOP, informative, ignored); job keys ``mem``, ``mem_bw``, ``swf_id``
and ``req_time`` override them.
"""
from __future__ import annotations

import json
import math
import os
from typing import Any

from hdeeprm.errors import WorkloadError
from hdeeprm.files import atomic_write
from hdeeprm.jsontext import decode_json
from hdeeprm.reading import MAX_TIME, MAX_TIME_TEXT, read_text
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Job, Profile, Workload


def _number(value: Any, what: str, source: str, *, minimum: float | None = 0.0, time: bool = False) -> float:
    """Return ``value`` as a finite float >= ``minimum`` or raise a WorkloadError naming ``what``.

    A ``time`` (seconds) must also be below :data:`~hdeeprm.reading.MAX_TIME`.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise WorkloadError(f"{what} must be a finite number, got {value!r}", path=source)
    if minimum is not None and value < minimum:
        raise WorkloadError(f"{what} must be >= {minimum:g}, got {value!r}", path=source)
    if time and not value < MAX_TIME:
        raise WorkloadError(f"{what} must be {MAX_TIME_TEXT}, got {value!r}", path=source)
    return float(value)


def _profile(name: str, spec: Any, job_what: str, source: str) -> Profile:
    what = f"{job_what}: profile {name!r}"
    if not isinstance(spec, dict):
        raise WorkloadError(f"{what} must be a JSON object, got {spec!r}", path=source)
    ptype = spec.get("type")
    if ptype == DELAY:
        if "delay" not in spec:
            raise WorkloadError(f"{what} (type 'delay') must have a 'delay' field", path=source)
        return Profile(name, DELAY, delay=_number(spec["delay"], f"{what}: field 'delay'", source, time=True))
    if ptype == PARALLEL_HOMOGENEOUS:
        if "cpu" not in spec:
            raise WorkloadError(f"{what} (type 'parallel_homogeneous') must have a 'cpu' field",
                                path=source)
        cpu = _number(spec["cpu"], f"{what}: field 'cpu'", source)
        com = _number(spec.get("com", 0), f"{what}: field 'com'", source)
        if com != 0:
            raise WorkloadError(f"{what} has type 'parallel_homogeneous' with com = {com:g} > 0, "
                                f"which is unsupported: only computation-only profiles (com = 0) "
                                f"are simulated", path=source)
        return Profile(name, PARALLEL_HOMOGENEOUS, cpu=cpu)
    raise WorkloadError(f"{what} has type {ptype!r}, which is unsupported: supported types are "
                        f"'delay' and 'parallel_homogeneous' (com = 0)", path=source)


def read_batsim_workload(path: str | os.PathLike, *, name: str = "w0") -> Workload:
    """Read a Batsim JSON workload.

    Args:
        path: The JSON file.
        name: Workload name (Batsim names the first workload ``w0``).

    Returns:
        The :class:`Workload`, jobs sorted stably by ``subtime`` with ``index`` = position.

    Raises:
        WorkloadError: Unreadable or non-UTF-8 file (with its line), invalid JSON (with its line), a key given
            twice in one object, a missing or
            invalid field (times must be below :data:`~hdeeprm.reading.MAX_TIME`)
            (named with the job's position and id), a duplicate job id, an unknown profile, or an
            unsupported profile type (naming the job, the profile and the type).
    """
    source = os.fspath(path)
    text = read_text(source, "Batsim JSON workload", WorkloadError)   # the reading rules of every input
    try:
        data = decode_json(text, source, WorkloadError)   # a key given twice, NaN, 1e400 refused
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=source,
                            line=exc.lineno) from None
    if not isinstance(data, dict):
        raise WorkloadError(f"the workload must be a JSON object, got {type(data).__name__}",
                            path=source)
    for key in ("jobs", "profiles"):
        if key not in data:
            raise WorkloadError(f"the workload must have a {key!r} field", path=source)
    raw_jobs, raw_profiles = data["jobs"], data["profiles"]
    if not isinstance(raw_jobs, list):
        raise WorkloadError(f"field 'jobs' must be a list, got {type(raw_jobs).__name__}", path=source)
    if not isinstance(raw_profiles, dict):
        raise WorkloadError(f"field 'profiles' must be an object, got {type(raw_profiles).__name__}",
                            path=source)
    nb_res = data.get("nb_res", 0)
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res < 0:
        raise WorkloadError(f"field 'nb_res' must be a non-negative integer, got {nb_res!r}",
                            path=source)
    reference_speed = _number(data.get("reference_speed", 0.0), "field 'reference_speed'", source)

    profiles: dict[str, Profile] = {}
    jobs: list[Job] = []
    seen: set[str] = set()
    for position, raw in enumerate(raw_jobs):
        if not isinstance(raw, dict):
            raise WorkloadError(f"job {position} must be a JSON object, got {raw!r}", path=source)
        job_id = raw.get("id")
        if isinstance(job_id, bool) or not isinstance(job_id, (str, int)) or job_id == "":
            raise WorkloadError(f"job {position}: field 'id' must be a non-empty string or an "
                                f"integer, got {job_id!r}", path=source)
        job_id = str(job_id)
        what = f"job {position} (id {job_id!r})"
        if job_id in seen:
            raise WorkloadError(f"{what}: id is not unique", path=source)
        seen.add(job_id)
        for key in ("subtime", "res", "profile"):
            if key not in raw:
                raise WorkloadError(f"{what} must have a {key!r} field", path=source)
        subtime = _number(raw["subtime"], f"{what}: field 'subtime'", source, time=True)
        res = raw["res"]
        if isinstance(res, bool) or not isinstance(res, int) or res < 1:
            raise WorkloadError(f"{what}: field 'res' must be a positive integer, got {res!r}",
                                path=source)
        walltime = _number(raw.get("walltime", -1), f"{what}: field 'walltime'", source, minimum=None,
                           time=True)
        if walltime != -1 and walltime <= 0:
            raise WorkloadError(f"{what}: field 'walltime' must be > 0 or -1 (none), got "
                                f"{raw['walltime']!r}", path=source)
        pname = raw["profile"]
        if not isinstance(pname, str) or pname not in raw_profiles:
            raise WorkloadError(f"{what}: profile {pname!r} is not defined in 'profiles'", path=source)
        profile = profiles.get(pname)
        spec = raw_profiles[pname]
        if profile is None:
            profile = profiles[pname] = _profile(pname, spec, what, source)
        extra = {k: spec[k] for k in ("mem", "mem_bw", "req_time") if k in spec}
        extra.update({k: raw[k] for k in ("mem", "mem_bw", "req_time") if k in raw})
        mem = _number(extra.get("mem", 0.0), f"{what}: field 'mem'", source)
        mem_bw = _number(extra.get("mem_bw", 0.0), f"{what}: field 'mem_bw'", source)
        swf_id = raw.get("swf_id", -1)
        if isinstance(swf_id, bool) or not isinstance(swf_id, int):
            raise WorkloadError(f"{what}: field 'swf_id' must be an integer, got {swf_id!r}",
                                path=source)
        requested = walltime
        if "req_time" in extra and ("req_time" in raw or walltime == -1):
            requested = _number(extra["req_time"], f"{what}: field 'req_time'", source, time=True)
        jobs.append(Job(index=position, id=job_id, subtime=subtime, res=res, walltime=walltime,
                        profile=profile, mem=mem, mem_bw=mem_bw, swf_id=swf_id,
                        requested_time=requested))
    jobs.sort(key=lambda job: job.subtime)
    for index, job in enumerate(jobs):
        job.index = index
    return Workload(jobs=jobs, name=name, nb_res=nb_res, reference_speed=reference_speed,
                    source=source)


def _compact(value: float) -> int | float:
    """An integral float as int (so 10.0 is written 10), other floats unchanged."""
    return int(value) if value.is_integer() and abs(value) < 2 ** 53 else value


def write_batsim_workload(workload: Workload, path: str | os.PathLike, *,
                          nb_res: int | None = None) -> None:
    """Write a workload as Batsim JSON that :func:`read_batsim_workload` reads back identically.

    Profiles are written once by name. Job keys beyond Batsim's are added only when they carry
    information: ``walltime`` (when not -1), ``mem``, ``mem_bw`` (when not 0), ``swf_id`` (when
    not -1), ``req_time`` (when the requested time differs from the walltime);
    ``reference_speed`` is a top-level key when not 0. Batsim ignores the extra keys.

    Args:
        workload: The workload.
        path: Output file.
        nb_res: Value of ``nb_res`` (default: ``workload.nb_res``).

    The file is written atomically (:func:`hdeeprm.files.atomic_write`).

    Raises:
        OSError: The file cannot be written.
    """
    profiles: dict[str, dict[str, Any]] = {}
    for pname, profile in workload.profiles.items():
        if profile.type == DELAY:
            profiles[pname] = {"type": DELAY, "delay": _compact(profile.delay)}
        else:
            profiles[pname] = {"type": profile.type, "cpu": _compact(profile.cpu),
                               "com": _compact(profile.com)}
    jobs = []
    for job in workload.jobs:
        entry: dict[str, Any] = {"id": job.id, "subtime": _compact(job.subtime), "res": job.res,
                                 "profile": job.profile.name}
        if job.walltime != -1:
            entry["walltime"] = _compact(job.walltime)
        if job.requested_time != job.walltime:
            entry["req_time"] = _compact(job.requested_time)
        if job.mem:
            entry["mem"] = _compact(job.mem)
        if job.mem_bw:
            entry["mem_bw"] = _compact(job.mem_bw)
        if job.swf_id != -1:
            entry["swf_id"] = job.swf_id
        jobs.append(entry)
    data: dict[str, Any] = {"nb_res": workload.nb_res if nb_res is None else nb_res}
    if workload.reference_speed:
        data["reference_speed"] = workload.reference_speed
    data["jobs"] = jobs
    data["profiles"] = profiles
    with atomic_write(path) as out:   # an interrupted write leaves the old file, never half a new one
        out.write("{\n")
        keys = list(data)
        for k, key in enumerate(keys):
            sep = "," if k < len(keys) - 1 else ""
            if key == "jobs":
                out.write(' "jobs": [\n')
                out.write(",\n".join("  " + json.dumps(j) for j in jobs))
                out.write(f"\n ]{sep}\n")
            elif key == "profiles":
                out.write(' "profiles": {\n')
                out.write(",\n".join(f"  {json.dumps(n)}: {json.dumps(p)}" for n, p in profiles.items()))
                out.write(f"\n }}{sep}\n")
            else:
                out.write(f" {json.dumps(key)}: {json.dumps(data[key])}{sep}\n")
        out.write("}\n")
