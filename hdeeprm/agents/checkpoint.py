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
        "extra": {...}                      # e.g. gamma, hidden, lr, episodes trained
      },
      "model_state_dict": {...},            # nn.Module.state_dict()
      "optimizer_state_dict": {...} | None  # torch.optim.Optimizer.state_dict()
    }

The file is first written to a temporary file in the same folder, then moved
into place with :func:`os.replace` (:func:`hdeeprm.files.atomic_write`), so
an interrupted save never leaves a truncated checkpoint behind; the file's mode
follows the umask, and the temporary files of killed saves are removed by the next.
"""
from __future__ import annotations

import io
import os
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

from hdeeprm import __version__
from hdeeprm.errors import AgentError, OptionsError
from hdeeprm.files import atomic_write

#: Identifies HDeepRM checkpoint files.
FORMAT = "hdeeprm-checkpoint"
#: Version of the layout described in the module docstring.
FORMAT_VERSION = 1


def save_checkpoint(path: str | Path, model_state: dict, optimizer_state: dict | None, *,
                    agent_class: str, observation_size: int, action_size: int,
                    extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write a checkpoint atomically (see :func:`hdeeprm.files.atomic_write`).

    Args:
        path: Destination file (its folder is created if needed).
        model_state: ``module.state_dict()``.
        optimizer_state: ``optimizer.state_dict()``, or None.
        agent_class: Name of the agent's class (informative).
        observation_size: Length of the observations the model takes.
        action_size: Number of actions the model chooses among.
        extra: More plain-JSON facts to keep in the manifest.

    Returns:
        The manifest written.
    """
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "hdeeprm_version": __version__,
                "torch_version": str(torch.__version__), "agent_class": agent_class,
                "observation_size": int(observation_size), "action_size": int(action_size),
                "extra": dict(extra or {})}
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
    if manifest.get("format_version", 0) > FORMAT_VERSION:
        raise AgentError(f"checkpoint format_version must be <= {FORMAT_VERSION}, got "
                         f"{manifest.get('format_version')} (written by HDeepRM "
                         f"{manifest.get('hdeeprm_version')}) ({path})")
    return data


def check_compatible(data: dict[str, Any], model_state: dict, *, observation_size: int, action_size: int,
                     path: str | Path) -> None:
    """Check a loaded checkpoint against the model it is loaded into.

    Args:
        data: What :func:`load_checkpoint` returned.
        model_state: The receiving model's ``state_dict()``.
        observation_size: The receiving agent's observation length.
        action_size: The receiving agent's number of actions.
        path: The checkpoint file (for messages).

    Raises:
        AgentError: different observation or action sizes, missing/unexpected
            parameters, or a parameter of another shape; the message names both shapes.
    """
    m = data["manifest"]
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
