"""A vector environment that runs several sub-environments in each worker process (batched workers).

Gymnasium's ``AsyncVectorEnv`` runs one sub-environment per process: every step of every sub-environment
pays a round trip between processes (about 100-160 µs on a shared 2-core machine), more than an
``HDeepRM-v0`` step itself (about 60 µs), so more processes barely help (``benchmarks/bench_vec_env.py``).
:class:`BatchedVectorEnv` gives each of ``workers`` processes a contiguous group of the sub-environments,
stepped there one after the other as ``SyncVectorEnv`` steps them: one round trip per worker and vector step,
whatever the group's size, and the observations written into shared memory. Sub-environments built from the
same platform and workload objects share them in a worker (one copy, warmer caches)::

    from functools import partial
    from hdeeprm.env.environment import HDeepRMEnv
    from hdeeprm.env.vector import BatchedVectorEnv

    envs = BatchedVectorEnv([partial(HDeepRMEnv, observation="minimal")] * 32, workers=8)
    obs, info = envs.reset(seed=0)                       # obs: (32, 21)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

It returns exactly what ``gymnasium.vector.SyncVectorEnv`` over the same constructors returns (same seeds:
sub-environment ``i`` is reset with ``seed + i``; ``NEXT_STEP`` autoreset; infos with their ``_key`` masks),
only computed in parallel. Observation spaces must be ``Box`` or any space Gymnasium's shared-memory helpers
take (:func:`gymnasium.vector.utils.create_shared_memory`).
"""
from __future__ import annotations

import ctypes
import multiprocessing
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space, create_shared_memory, iterate, read_from_shared_memory, \
    write_to_shared_memory

from hdeeprm import arguments
from hdeeprm.errors import OptionsError


def split(nb_envs: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous ``(first, end)`` groups of ``nb_envs`` sub-environments over ``workers``, sizes differing by <= 1."""
    base, extra = divmod(nb_envs, workers)
    bounds, first = [], 0
    for w in range(workers):
        end = first + base + (w < extra)
        bounds.append((first, end))
        first = end
    return bounds


def merge_infos(parts: Sequence[dict], sizes: Sequence[int]) -> dict:
    """One vector info from the vector infos of consecutive groups of sub-environments.

    Args:
        parts: Each group's info as ``SyncVectorEnv`` returns it (arrays of the group's length and ``_key``
            masks, nested dicts for dict values).
        sizes: The groups' numbers of sub-environments.

    A mask given as ``True`` (what the workers send for a key every sub-environment of the group has)
    stands for all True.

    Returns:
        The info of all groups together, as one ``SyncVectorEnv`` over all of them returns it: a key a group
        lacks is filled there with zeros (None for object arrays) and its mask with False.
    """
    out: dict = {}
    keys = list(dict.fromkeys(key for part in parts for key in part))
    for key in keys:
        present = [part[key] for part in parts if key in part]
        if isinstance(present[0], dict):
            out[key] = merge_infos([part.get(key, {}) for part in parts], sizes)
            continue
        model = next((value for value in present if value is not True), None)
        if model is None:   # every group's mask is all True
            out[key] = np.ones(sum(sizes), dtype=np.bool_)
            continue
        pieces = []
        for part, size in zip(parts, sizes):
            value = part.get(key)
            if value is True:
                value = np.ones(size, dtype=np.bool_)
            elif value is None:
                value = (np.full(size, None, dtype=object) if model.dtype == object
                         else np.zeros((size, *model.shape[1:]), dtype=model.dtype))
            pieces.append(value)
        out[key] = np.concatenate(pieces)
    return out


class _InfoBatcher(VectorEnv):
    """Gymnasium's own per-environment info batching (:meth:`VectorEnv._add_info`) for ``num_envs`` environments."""

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs

    def batch(self, infos: Sequence[dict | None]) -> dict:
        """The vector info of one info per environment (None: that environment gave none).

        A key every environment has, with values of one type, gets one array and the mask ``True``
        (all True, for :func:`merge_infos`); otherwise Gymnasium's ``_add_info`` builds the arrays.
        """
        first = next((info for info in infos if info is not None), None)
        if first is None:
            return {}
        keys = tuple(first)
        if all(info is not None and tuple(info) == keys for info in infos):   # the usual case: one array per key
            out: dict = {}
            for key in keys:
                values = [info[key] for info in infos]
                kind = type(values[0])
                if not all(type(v) is kind for v in values):
                    break
                if kind in (int, float, bool) or issubclass(kind, np.number):
                    out[key] = np.array(values, dtype=kind)
                elif kind is np.ndarray and all(v.shape == values[0].shape and v.dtype == values[0].dtype
                                                for v in values):
                    out[key] = np.stack(values)
                else:
                    break
                out[f"_{key}"] = True   # all True (merge_infos expands it)
            else:
                return out
        out = {}
        for i, info in enumerate(infos):
            if info is not None:
                out = self._add_info(out, info, i)
        return out


class _Group:
    """A worker's sub-environments, stepped as ``SyncVectorEnv`` steps them (``NEXT_STEP`` autoreset).

    Observations go into the shared memory at the group's rows; the rest is returned.
    """

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]], first: int, nb_envs: int, space,
                 memory, results) -> None:
        self.envs = [fn() for fn in env_fns]
        self.first = first
        # rows: rewards, terminations, truncations (0/1) of every sub-environment; this group's columns
        self.results = np.frombuffer(results, dtype=np.float64).reshape(3, nb_envs)[:, first:first + len(self.envs)]
        self.space, self.memory = space, memory
        self.action_space = batch_space(self.envs[0].action_space, len(self.envs))
        self.autoreset = np.zeros(len(self.envs), dtype=np.bool_)
        self.infos = _InfoBatcher(len(self.envs))
        self.shared = (read_from_shared_memory(space, memory, n=nb_envs)
                       if isinstance(space, gymnasium.spaces.Box) else None)

    def publish(self, i: int, obs) -> None:
        """Write sub-environment ``i``'s observation into the shared memory."""
        if self.shared is not None:
            self.shared[self.first + i] = obs
        else:
            write_to_shared_memory(self.space, self.first + i, obs, self.memory)

    def reset(self, seeds: Sequence[int | None], options: dict | None, mask: np.ndarray | None) -> dict:
        """Reset the sub-environments (those of ``mask`` only, when given); returns the vector info."""
        infos: list[dict | None] = [None] * len(self.envs)
        for i, env in enumerate(self.envs):
            if mask is None or mask[i]:
                obs, infos[i] = env.reset(seed=seeds[i], options=options)
                self.publish(i, obs)
                self.autoreset[i] = False
        return self.infos.batch(infos)

    def step(self, actions) -> dict:
        """One step of every sub-environment (a reset for those whose episode ended at the previous step).

        Rewards, terminations and truncations go into the shared results; returns the vector info.
        """
        results = self.results
        results[:] = 0.0
        rewards, terminations, truncations = results
        infos = []
        for i, (env, action) in enumerate(zip(self.envs, iterate(self.action_space, actions))):
            if self.autoreset[i]:
                obs, info = env.reset()
            else:
                obs, rewards[i], terminations[i], truncations[i], info = env.step(action)
            self.publish(i, obs)
            infos.append(info)
        self.autoreset = (terminations != 0.0) | (truncations != 0.0)
        return self.infos.batch(infos)

    def close(self) -> None:
        """Close the sub-environments."""
        for env in self.envs:
            env.close()


def _worker(env_fns: Sequence[Callable[[], gymnasium.Env]], first: int, nb_envs: int, space, memory, results,
            pipe) -> None:
    """A worker's loop: commands from the pipe, answers ``("ok", data)`` or ``("error", (exception, traceback))``."""
    group = None
    try:
        group = _Group(env_fns, first, nb_envs, space, memory, results)
        pipe.send(("ok", None))
        while True:
            command, data = pipe.recv()
            if command == "step":
                pipe.send(("ok", group.step(data)))
            elif command == "reset":
                pipe.send(("ok", group.reset(*data)))
            elif command == "call":
                name, args, kwargs = data
                values = []
                for env in group.envs:
                    attribute = getattr(env, name)
                    values.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
                pipe.send(("ok", values))
            else:   # close
                pipe.send(("ok", None))
                return
    except KeyboardInterrupt:
        return
    except BaseException as exc:   # sent to the parent, which raises it
        try:
            pipe.send(("error", (exc, traceback.format_exc())))
        except Exception:
            pipe.send(("error", (RuntimeError(repr(exc)), traceback.format_exc())))
    finally:
        if group is not None:
            group.close()
        pipe.close()


class BatchedVectorEnv(VectorEnv):
    """Sub-environments spread over worker processes in contiguous groups (see the module docstring).

    Args:
        env_fns: Constructors of the sub-environments (picklable with the ``spawn`` and ``forkserver``
            contexts), all with the same spaces.
        workers: Worker processes (>= 1; at most ``len(env_fns)``, fewer are started when there are fewer
            sub-environments).
        context: ``multiprocessing`` start method (None: the platform's default, as ``AsyncVectorEnv``).

    Raises:
        OptionsError: no constructor, or ``workers`` not an integer >= 1.
        Any exception of a sub-environment (its constructor included), raised again here with the worker's
        traceback as its note.
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]], workers: int = 2,
                 context: str | None = None) -> None:
        if not env_fns:
            raise OptionsError("a vector environment needs at least one sub-environment constructor")
        workers = min(arguments.count("workers", workers), len(env_fns))
        probe = env_fns[0]()
        self.single_observation_space, self.single_action_space = probe.observation_space, probe.action_space
        self.metadata = {**getattr(probe, "metadata", {}), **type(self).metadata}
        probe.close()
        self.num_envs = len(env_fns)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        ctx = multiprocessing.get_context(context)
        self._memory = create_shared_memory(self.single_observation_space, n=self.num_envs, ctx=ctx)
        self._obs = read_from_shared_memory(self.single_observation_space, self._memory, n=self.num_envs)
        self._results_memory = ctx.RawArray(ctypes.c_double, 3 * self.num_envs)
        self._results = np.frombuffer(self._results_memory, dtype=np.float64).reshape(3, self.num_envs)
        self._groups = split(self.num_envs, workers)
        self._sizes = [end - first for first, end in self._groups]
        self._pipes, self.processes = [], []
        self.closed = False
        for first, end in self._groups:
            parent, child = ctx.Pipe()
            process = ctx.Process(target=_worker, name=f"BatchedVectorEnv-{first}", daemon=True,
                                  args=(list(env_fns[first:end]), first, self.num_envs,
                                        self.single_observation_space, self._memory, self._results_memory,
                                        child))
            process.start()
            child.close()
            self._pipes.append(parent)
            self.processes.append(process)
        self._receive()

    def _receive(self) -> list[Any]:
        """Every worker's answer, in group order; a worker's error is raised (after closing)."""
        answers, error = [], None
        for pipe in self._pipes:
            try:
                status, data = pipe.recv()
            except EOFError:
                status, data = "error", (RuntimeError("a BatchedVectorEnv worker died"), "")
            if status == "error" and error is None:
                error = data
            answers.append(data)
        if error is not None:
            exc, text = error
            self.close(terminate=True)
            if text:
                exc.add_note(f"in a BatchedVectorEnv worker:\n{text}")
            raise exc
        return answers

    def _observations(self):
        return self._obs.copy() if isinstance(self._obs, np.ndarray) else \
            read_from_shared_memory(self.single_observation_space, self._memory, n=self.num_envs)

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None):
        """Reset every sub-environment (sub-environment ``i`` with ``seed + i``, or ``seed[i]``).

        Returns:
            ``(observations, infos)``, batched as ``SyncVectorEnv.reset`` returns them.
        """
        seeds = ([None] * self.num_envs if seed is None else
                 [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else list(seed))
        if len(seeds) != self.num_envs:
            raise OptionsError(f"reset needs one seed per sub-environment ({self.num_envs}), got {len(seeds)}")
        mask = None
        if options is not None and "reset_mask" in options:   # Gymnasium's partial reset
            options = dict(options)
            mask = np.asarray(options.pop("reset_mask"), dtype=np.bool_)
            if mask.shape != (self.num_envs,) or not mask.any():
                raise OptionsError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with "
                                   f"at least one True, got {mask!r}")
        for pipe, (first, end) in zip(self._pipes, self._groups):
            pipe.send(("reset", (seeds[first:end], options, None if mask is None else mask[first:end])))
        infos = self._receive()
        return self._observations(), merge_infos(infos, self._sizes)

    def step(self, actions):
        """Step every sub-environment with its action (``NEXT_STEP`` autoreset, as ``SyncVectorEnv``).

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, batched.
        """
        actions = np.asarray(actions)
        for pipe, (first, end) in zip(self._pipes, self._groups):
            pipe.send(("step", actions[first:end]))
        infos = merge_infos(self._receive(), self._sizes)
        rewards, terminations, truncations = self._results
        return self._observations(), rewards.copy(), terminations != 0.0, truncations != 0.0, infos

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call ``name`` (a method, or read an attribute) on every sub-environment; results in order."""
        for pipe in self._pipes:
            pipe.send(("call", (name, args, kwargs)))
        return tuple(value for part in self._receive() for value in part)

    def close_extras(self, terminate: bool = False, **kwargs: Any) -> None:
        """Stop the workers (at once with ``terminate``)."""
        for pipe, process in zip(self._pipes, self.processes):
            if not terminate and process.is_alive():
                try:
                    pipe.send(("close", None))
                    pipe.recv()
                except (EOFError, OSError):
                    pass
            pipe.close()
        for process in self.processes:
            if terminate and process.is_alive():
                process.terminate()
            process.join(5)
            if process.is_alive():
                process.kill()
