"""The walk over the fitting nodes: where a GPU pod, or each part of a job, goes, best first.

:class:`NodeChoices` offers the nodes a pod fits in an order of preference: a placement policy's scores
(:class:`PolicyChoices`, ties by a random rank of the nodes drawn once per run) or the fewest free GPUs of the
reservations' rule (:class:`FewestFreeChoices`). :func:`place_job` walks it for each part of a job: the best node
alone (:func:`select_node`), or, when a placement must pass a test (it must not delay a reservation: EASY's head,
conservative backfilling's reservations), every fitting node in that order before giving up. :func:`plan_parts`
is where a job's parts would go at once under the reservations' rule, the state left as it was.

The state it walks over (free resources, the fit rule) is :mod:`~hdeeprm.decision.gpu_placement`'s; the scores are
the plugins of :mod:`~hdeeprm.decision.gpu_scoring`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from hdeeprm.decision.gpu_placement import Placement, PlacementPolicy, PlacementState, PodRequest

#: A test a job's placement must pass (e.g. it must not delay a reservation): the parts placed so far -> whether
#: they may stay. It is asked after each part, with the parts before it, and must be monotone: parts that fail
#: cannot become acceptable when more parts are added (a later part only takes more resources).
Accept = Callable[[list[Placement]], bool]


class NodeChoices:
    """Where a part of a job may go, best first: the order of preference :func:`place_job` walks.

    Subclasses give :meth:`_ranked`; :meth:`first` is the best node alone (what a placement without a test takes),
    calling it ``(state, pod, done)`` offers every fitting node, lazily (the order of the others is computed only
    when the first is refused).
    """

    def _ranked(self, state: PlacementState, pod: PodRequest, done: Sequence[Placement]):
        """The fitting nodes of ``pod`` ranked, or None when it fits none.

        Returns:
            ``(first, rest, at)``: the best node's position among the fitting nodes, a function returning every
            position best first, and ``at(k)`` -> ``(node, GPUs)`` of position ``k``.
        """
        raise NotImplementedError

    def first(self, state: PlacementState, pod: PodRequest, done: Sequence[Placement] = ()
              ) -> tuple[int, np.ndarray] | None:
        """The best node for ``pod`` and its GPUs, or None when it fits no node.

        Args:
            state: Free resources.
            pod: The part to place.
            done: The job's parts placed before it.
        """
        ranked = self._ranked(state, pod, done)
        return None if ranked is None else ranked[2](ranked[0])

    def __call__(self, state: PlacementState, pod: PodRequest, done: Sequence[Placement] = ()
                 ) -> Iterator[tuple[int, np.ndarray]]:
        """Every node ``pod`` fits, best first, with its GPUs (see :meth:`first`)."""
        ranked = self._ranked(state, pod, done)
        if ranked is None:
            return
        first, rest, at = ranked
        yield at(first)
        for k in rest():
            if k != first:
                yield at(k)


class PolicyChoices(NodeChoices):
    """The fitting nodes in a policy's order of preference: best score first, ties by lowest ``rank``.

    The first node is :func:`select_node`'s (the same scores and random draws); each node comes with the GPUs the
    policy chose there (``fgd``) or its GPU selection (:meth:`PlacementState.choose_gpus`).

    Args:
        policy: The placement policy.
        rank: Tie-break rank of each node, int64 (N,) (a random permutation drawn once per run).
        rng: Random generator of the run (``random`` and random GPU choice).
    """

    def __init__(self, policy: PlacementPolicy, rank: np.ndarray, rng: np.random.Generator) -> None:
        self.policy, self.rank, self.rng = policy, rank, rng

    def _ranked(self, state, pod, done):
        nodes = state.fitting_nodes(pod)
        if len(nodes) == 0:
            return None
        policy, rank, rng = self.policy, self.rank, self.rng
        scores, chosen = policy.score(state, pod, nodes, rng)
        best = np.flatnonzero(scores == scores.max())
        own = chosen is not None and pod.shares_gpu

        def at(k: int) -> tuple[int, np.ndarray]:
            node = int(nodes[k])
            return node, (chosen[k:k + 1] if own else state.choose_gpus(node, pod, policy.gpu_selection, rng))

        return (int(best[np.argmin(rank[nodes[best]])]), lambda: np.lexsort((rank[nodes], -scores)).tolist(), at)


class FewestFreeChoices(NodeChoices):
    """The fitting nodes, fewest free GPUs first (ties: lowest index): the rule of the reservations.

    The node with the fewest free GPUs is the tightest fit of a best-fit rule on the GPU dimension; reservations
    (EASY's head check, conservative backfilling's plans) use it instead of the run's policy, which may draw
    random numbers or keep fragmentation state. A shared GPU is the fitting one with the least free share.

    Args:
        room: Optional extra limit per node in the pods' CPU unit (e.g. the cores node memory allows), int (N,),
            consumed by the parts placed before; None for none.
    """

    def __init__(self, room: np.ndarray | None = None) -> None:
        self.room = room

    def _ranked(self, state, pod, done):
        nodes = state.fitting_nodes(pod)
        if self.room is not None:
            left = self.room.copy()
            for p in done:
                left[p.node] -= p.pod.cpu
            nodes = nodes[left[nodes] >= pod.cpu]
        if len(nodes) == 0:
            return None
        free = state.total_left[nodes]

        def at(k: int) -> tuple[int, np.ndarray]:
            return int(nodes[k]), state.choose_gpus(int(nodes[k]), pod, "best", None)

        return int(np.argmin(free)), lambda: np.argsort(free, kind="stable").tolist(), at


def place_job(state: PlacementState, pods: Sequence[PodRequest], choose: NodeChoices,
              accept: Accept | None = None) -> list[Placement] | None:
    """Place a job's parts on ``state``, each on the first node ``choose`` offers where ``accept`` holds.

    This is where a start that must not delay a reservation (EASY's head, conservative backfilling's reservations)
    tries every fitting node, in the order of preference, before giving up. Parts are placed in order, each seeing
    the ones before it taken; a part that no node accepts fails the job (earlier parts are not moved: the search
    is greedy over a spread job's parts, exhaustive over the nodes of each).

    Args:
        state: Free resources; the job's resources are taken from it when it is placed, left as they were otherwise.
        pods: The job's parts.
        choose: Where a part may go, best first (:class:`PolicyChoices`, :class:`FewestFreeChoices`).
        accept: The test the placement must pass (see :data:`Accept`); None: the first node offered.

    Returns:
        The placements, or None when a part fits no node (or none that ``accept`` accepts).
    """
    done: list[Placement] = []
    for pod in pods:
        if accept is None:   # the best node; the order of the others is never computed
            best = choose.first(state, pod, done)
            if best is not None:
                state.place(best[0], best[1], pod)
                done.append(Placement(best[0], best[1], pod))
        else:
            best = None
            for node, gpus in choose(state, pod, done):
                state.place(node, gpus, pod)
                done.append(Placement(node, gpus, pod))
                if accept(done):
                    best = node, gpus
                    break
                done.pop()
                state.release(node, gpus, pod)
        if best is None:
            for p in reversed(done):
                state.release(p.node, p.gpus, p.pod)
            return None
    return done


def plan_parts(state: PlacementState, pods: Sequence[PodRequest], room: np.ndarray | None = None,
               accept: Accept | None = None) -> list[Placement] | None:
    """Where a job's parts would go at once on ``state``: each on the fitting node with the fewest free GPUs.

    The rule of the reservations (EASY's head check, conservative backfilling's plans, a gang's fit on a
    mixed platform, :class:`FewestFreeChoices`); ``state`` is left as it was.

    Args:
        state: Free resources (a real or what-if state).
        pods: The job's parts, placed in this order (each sees the ones before it taken).
        room: Optional extra limit per node in the pods' CPU unit (e.g. the cores node memory allows), int (N,),
            consumed by the parts; None for none.
        accept: A test the placement must pass (see :func:`place_job`): each part then goes to the node with the
            fewest free GPUs among those where it passes. None: no test.

    Returns:
        The placements, or None when a part fits no node (or none that ``accept`` accepts).
    """
    done = place_job(state, pods, FewestFreeChoices(room), accept)
    for p in reversed(done or ()):
        state.release(p.node, p.gpus, p.pod)
    return done


def select_node(state: PlacementState, pod: PodRequest, policy: PlacementPolicy, rank: np.ndarray,
                rng: np.random.Generator) -> tuple[int, np.ndarray] | None:
    """Where ``policy`` places ``pod``: the best-scored fitting node (ties: lowest ``rank``) and its GPUs.

    Args:
        state: The cluster's free resources.
        pod: The pod.
        policy: The policy.
        rank: Tie-break rank of each node, int64 (N,) (a random permutation drawn once per run).
        rng: Random generator of the run (``random`` and random GPU choice).

    Returns:
        ``(node, gpus)``, or None when the pod fits no node.
    """
    return PolicyChoices(policy, rank, rng).first(state, pod)
