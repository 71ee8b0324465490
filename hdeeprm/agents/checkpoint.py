"""Checkpoints of learning agents: state dicts plus a small manifest, written atomically.

Format (``FORMAT_VERSION`` 1): one file written with :func:`torch.save`
holding a dict of plain types and tensors only, so it loads with
``torch.load(..., weights_only=True)`` (no pickled code is executed)::

    {
      "manifest": {
        "format": "hdeeprm-checkpoint",
        "format_version": 1,
        "hdeeprm_version": "0.3.0",
        "torch_version": "2.13.0+cpu",
        "agent_class": "REINFORCEAgent",
        "observation_size": 21,
        "action_size": 5,
        "actions": ["first-high_gflops", ..., "void"],  # the agent's actions by name (optional)
        "extra": {...}                      # e.g. gamma, hidden, lr, episodes trained
      },
      "model_state_dict": {...},            # nn.Module.state_dict()
      "optimizer_state_dict": {...} | None  # torch.optim.Optimizer.state_dict()
    }

``actions`` is the agent's action table by name: entry ``i`` names the action the
model's output ``i`` stands for (:func:`hdeeprm.decision.actions.action_name` of the
agent's full action indices, e.g. ``"first-contiguous"`` or ``"void"``). Loading refuses,
in one line naming the first differing position, an agent whose table differs
(:func:`check_compatible`), so a model never reloads with shifted meanings. It is written
when the agent knows its table (a :class:`~hdeeprm.agents.learning.LearningAgent` built
with the run's options, or given ``action_names``). Checkpoints without it (written before
it existed, or by an agent that does not know its table) load as before, checked by action
count only; a warning says so when the receiving agent knows its table. Full action
indices 0-119 have kept their pairs since the numbering was frozen, and indices are only
appended (:mod:`hdeeprm.decision.actions`), so an older checkpoint of such actions keeps
its meanings.

The file is first written to a temporary file in the same folder, then moved
into place with :func:`os.replace` (:func:`hdeeprm.files.atomic_write`), so
an interrupted save never leaves a truncated checkpoint behind; the file's mode
follows the umask, and the temporary files of killed saves are removed by the next.
"""
from __future__ import annotations

import io
import logging
import os
import tempfile
import warnings
import zipfile
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from hdeeprm import __version__
from hdeeprm.errors import AgentError, OptionsError
from hdeeprm.files import atomic_write

#: Identifies HDeepRM checkpoint files.
FORMAT = "hdeeprm-checkpoint"
#: Version of the layout described in the module docstring.
FORMAT_VERSION = 1

log = logging.getLogger(__name__)


def save_checkpoint(path: str | Path, model_state: dict, optimizer_state: dict | None, *,
                    agent_class: str, observation_size: int, action_size: int,
                    actions: Sequence[str] | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write a checkpoint atomically (see :func:`hdeeprm.files.atomic_write`).

    Args:
        path: Destination file (its folder is created if needed).
        model_state: ``module.state_dict()``.
        optimizer_state: ``optimizer.state_dict()``, or None.
        agent_class: Name of the agent's class (informative).
        observation_size: Length of the observations the model takes.
        action_size: Number of actions the model chooses among.
        actions: The agent's action table by name (``action_size`` names, in the order of
            the model's outputs), or None when unknown (not stored then).
        extra: More plain-JSON facts to keep in the manifest.

    Returns:
        The manifest written.

    Raises:
        AgentError: ``actions`` does not hold ``action_size`` names.
    """
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "hdeeprm_version": __version__,
                "torch_version": str(torch.__version__), "agent_class": agent_class,
                "observation_size": int(observation_size), "action_size": int(action_size),
                "extra": dict(extra or {})}
    if actions is not None:
        names = [str(name) for name in actions]
        if len(names) != action_size:
            raise AgentError(f"checkpoint {path}: {len(names)} action names given for {action_size} actions")
        manifest["actions"] = names
    payload = {"manifest": manifest, "model_state_dict": model_state, "optimizer_state_dict": optimizer_state}
    buffer = io.BytesIO()   # serialised first: a full disk is then an OSError naming the file, not torch's
    torch.save(payload, buffer)
    with atomic_write(path, binary=True) as f:
        f.write(buffer.getbuffer())
    return manifest


def check_writable(path: str | Path) -> None:
    """Check, before a long training, that a checkpoint can be saved at ``path`` (``-om``).

    Creates the missing folders, as :func:`save_checkpoint` would, and a temporary file
    beside ``path`` (removed at once).

    Raises:
        OptionsError: ``"-om PATH: cannot write the checkpoint there (why)"``: ``path`` is a
            directory, or its folder cannot be created or written.
    """
    path = Path(path)

    def refuse(why: str) -> OptionsError:
        return OptionsError(f"-om {path}: cannot write the checkpoint there ({why})")

    if path.is_dir():
        raise refuse("it is a directory")
    folder = next(f for f in (path.parent, *path.parent.parents) if f.exists() or f == f.parent)
    if folder.exists() and not folder.is_dir():
        raise refuse(f"{folder} is not a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise refuse(exc.strerror or type(exc).__name__) from None


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint`.

    Returns:
        The dict of the module docstring (``manifest``, ``model_state_dict``,
        ``optimizer_state_dict``).

    Raises:
        AgentError: missing file, or one line ``"not an HDeepRM checkpoint (path): why"``
            (a directory, an empty, truncated, corrupt or foreign file), or a newer format.
    """
    import torch

    path = Path(path)
    if not path.exists():
        raise AgentError(f"checkpoint not found ({path})")

    def refuse(why: str) -> AgentError:
        return AgentError(f"not an HDeepRM checkpoint ({path}): {why}")

    if path.is_dir():
        raise refuse("it is a directory")
    try:
        size = path.stat().st_size
        is_zip = zipfile.is_zipfile(path)   # torch.save writes a zip archive (PyTorch >= 1.6)
    except OSError as exc:
        raise refuse(f"cannot read it ({exc.strerror})") from None
    if size == 0:
        raise refuse("the file is empty")
    if not is_zip:
        raise refuse("not an archive written by torch.save (truncated, or another kind of file)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0].split(". ")[0] if str(exc).strip() else ""
        raise refuse(f"torch.load cannot read it, corrupt or holding more than tensors and plain data "
                     f"({type(exc).__name__}: {first})") from None
    manifest = data.get("manifest") if isinstance(data, dict) else None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise refuse(f"no '{FORMAT}' manifest (a torch.save file of something else)")
    names = manifest.get("actions")
    if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise refuse("its manifest's 'actions' is not a list of action names")
    if manifest.get("format_version", 0) > FORMAT_VERSION:
        raise AgentError(f"checkpoint format_version must be <= {FORMAT_VERSION}, got "
                         f"{manifest.get('format_version')} (written by HDeepRM "
                         f"{manifest.get('hdeeprm_version')}) ({path})")
    return data


def check_compatible(data: dict[str, Any], model_state: dict, *, observation_size: int, action_size: int,
                     path: str | Path, actions: Sequence[str] | None = None) -> None:
    """Check a loaded checkpoint against the model it is loaded into.

    Args:
        data: What :func:`load_checkpoint` returned.
        model_state: The receiving model's ``state_dict()``.
        observation_size: The receiving agent's observation length.
        action_size: The receiving agent's number of actions.
        path: The checkpoint file (for messages).
        actions: The receiving agent's action table by name, or None when unknown. Compared
            with the checkpoint's when both are known; a checkpoint without one is checked
            by ``action_size`` only (module docstring).

    Raises:
        AgentError: a different action table, in one line naming the first difference
            (``"checkpoint PATH: action 38 is 'first-contiguous' there, 'first-foo' here
            (...)"``); different observation or action sizes, missing/unexpected
            parameters, or a parameter of another shape (the message names both shapes).
    """
    m = data["manifest"]
    theirs = m.get("actions")
    if actions is not None and theirs is not None:
        check_action_tables(theirs, actions, path=path)
    elif actions is not None:
        log.warning("checkpoint %s has no action table (written by HDeepRM %s): its %s actions are taken to be "
                    "the agent's, position by position", path, m.get("hdeeprm_version"), m.get("action_size"))
    if m["observation_size"] != observation_size or m["action_size"] != action_size:
        raise AgentError(f"checkpoint is for observation size {m['observation_size']} and {m['action_size']} "
                         f"actions, the agent has observation size {observation_size} and {action_size} "
                         f"actions ({path})")
    saved = data["model_state_dict"]
    missing = sorted(set(model_state) - set(saved))
    unexpected = sorted(set(saved) - set(model_state))
    if missing or unexpected:
        raise AgentError(f"checkpoint parameters differ from the agent's: missing {missing}, unexpected "
                         f"{unexpected} ({path})")
    for key, tensor in model_state.items():
        theirs = tuple(saved[key].shape)
        ours = tuple(tensor.shape)
        if theirs != ours:
            raise AgentError(f"checkpoint parameter '{key}' has shape {theirs}, the agent's has shape {ours} "
                             f"({path})")


def check_action_tables(theirs: Sequence[str], ours: Sequence[str], *, path: str | Path) -> None:
    """Refuse a checkpoint whose action table differs from the receiving agent's.

    Args:
        theirs: The checkpoint's action names (manifest ``actions``), in output order.
        ours: The receiving agent's action names, in output order.
        path: The checkpoint file (for the message).

    Raises:
        AgentError: one line naming the first position where the tables differ, e.g.
            ``"checkpoint m.pt: action 38 is 'first-contiguous' there, 'first-foo' here (the
            agent's action set differs from the one the model was trained with: give the run
            the training's pybatsim.env.actions)"``; a table shorter than the other reads
            ``no action`` at the positions it lacks.
    """
    theirs, ours = list(theirs), list(ours)
    if theirs == ours:
        return
    i = next((k for k, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))

    def name(table: list[str]) -> str:
        return f"'{table[i]}'" if i < len(table) else "no action"

    raise AgentError(f"checkpoint {path}: action {i} is {name(theirs)} there, {name(ours)} here (the agent's "
                     "action set differs from the one the model was trained with: give the run the training's "
                     "pybatsim.env.actions)")
