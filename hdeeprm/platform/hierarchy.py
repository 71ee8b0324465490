"""The static resource hierarchy of a platform and the pstate model of its cores.

HDeepRM's heterogeneity layer (``docs/model.rst``, "Heterogeneity layer") sees a platform as
clusters -> nodes -> processors -> cores, where every core is one resource
(one Batsim/SimGrid host). :class:`ResourceHierarchy` stores that tree as flat
numpy arrays built for fast policy look-ups: the cores of one processor are
contiguous, the processors of one node are contiguous, and the nodes of one
cluster are contiguous, so "the cores of processor p" is the slice
``processor_first_core[p] : processor_first_core[p] + processor_n_cores[p]``.

This module is also the single source of the four power states (pstates)
every core has; the engine, the rewards and the energy accounting all read
:data:`PSTATE_SPEED_FACTORS` and :data:`PSTATE_POWER_FACTORS` from here.

==========  ==========================================  ===========  ==========
pstate      meaning                                     speed        power
==========  ==========================================  ===========  ==========
``P0``      core computing at full speed                G            P
``P1``      core computing, processor memory bandwidth  0.75 G       P
            over-subscribed (contention)
``P2``      idle core of a processor with >= 1 busy     (idle)       0.25 P
            core
``P3``      core of a fully idle processor (initial)    (idle)       0.05 P
==========  ==========================================  ===========  ==========

G is the core's peak speed (clock rate x double-precision FLOP per cycle) and P
its share of the processor's thermal design power (TDP / cores). A core draws
the same power whether or not something computes on it in a given pstate
(SimGrid's ``Idle`` wattage equals its ``AllCores`` wattage), so power depends
on the pstate alone. Idle pstates do no work (speed factor 0); SimGrid needs a
positive speed for every pstate, so hosts exported to SimGrid get
:data:`IDLE_PSTATE_SPEED` (0.001 FLOP/s) there, which no job ever uses.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from hdeeprm.platform.hosts import HostSpec

#: Pstate of a core computing at its full peak speed G (power P).
P0 = 0
#: Pstate of a computing core slowed down by memory-bandwidth contention (0.75 G, power P).
P1 = 1
#: Pstate of an idle core whose processor has at least one busy core (power 0.25 P).
P2 = 2
#: Pstate of a core whose whole processor is idle (power 0.05 P); every core starts here.
P3 = 3
#: Number of pstates of every core.
N_PSTATES = 4
#: Pstate of every core at t = 0.
INITIAL_PSTATE = P3
#: Computing speed of each pstate as a fraction of the core's peak speed G (idle pstates: 0).
PSTATE_SPEED_FACTORS: tuple[float, ...] = (1.0, 0.75, 0.0, 0.0)
#: Power of each pstate as a fraction of the core's power P (whether computing or not).
PSTATE_POWER_FACTORS: tuple[float, ...] = (1.0, 1.0, 0.25, 0.05)
#: Speed in FLOP/s given to SimGrid for the idle pstates P2 and P3 (SimGrid rejects 0).
IDLE_PSTATE_SPEED = 0.001
#: Speed in FLOP/s of the master host Batsim runs its own actors on (it computes no job).
MASTER_HOST_SPEED = 1e9


@dataclass(frozen=True, slots=True)
class ProcessorType:
    """A processor model from a type library.

    Attributes:
        name: Library key, e.g. ``"Xeon L5640"``.
        cores: Number of cores.
        clock_rate: Base clock frequency in GHz (turbo not considered).
        dpflops_per_cycle: Double-precision FLOP per cycle and core.
        power: Thermal design power of the whole processor in watts.
        mem_bw: Memory bandwidth in GB/s, shared by all its cores.
        kind: Device category (library field ``type``); only ``"CPU"`` today.
        uarch: Microarchitecture code name, informative.
        llc_size: Last-level cache in MB, informative.
        source: Library file that defined it (for messages).
    """

    name: str
    cores: int
    clock_rate: float
    dpflops_per_cycle: float
    power: float
    mem_bw: float
    kind: str = "CPU"
    uarch: str | None = None
    llc_size: float | None = None
    source: str = ""

    @property
    def core_speed(self) -> float:
        """Peak speed G of one core in FLOP/s: clock (GHz, rounded to the Hz) x 1e9 x FLOP/cycle."""
        return float(round(self.clock_rate * 1e9)) * self.dpflops_per_cycle

    @property
    def core_power(self) -> float:
        """Power P of one core in watts: the processor's TDP divided by its cores."""
        return self.power / self.cores


@dataclass(frozen=True, slots=True)
class NodeType:
    """A node model from a type library.

    Attributes:
        name: Library key, e.g. ``"Bullx B500-0"``.
        processors: ``(processor type name, number)`` pairs, in slot order.
        memory_capacity: Node memory in GB (shared by all its cores).
        memory_type: Memory technology, informative (e.g. ``"DDR3-1333"``).
        source: Library file that defined it (for messages).
        gpus: ``(GPU type name, number, grouping)`` triples (grouping ``"NVLink"`` or ``"PCIe"``); empty for a
            CPU-only node. The CPU model ignores them; timed GPU runs read them
            (:mod:`hdeeprm.platform.gpu_platform`).
    """

    name: str
    processors: tuple[tuple[str, int], ...]
    memory_capacity: float
    memory_type: str = ""
    source: str = ""
    gpus: tuple[tuple[str, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class LinkSpec:
    """A network link class of a platform.

    Attributes:
        type: Network type name from the library, e.g. ``"InfiniBand QDR"``.
        bandwidth: Bandwidth in bytes per second.
        latency: Latency in seconds.
        bandwidth_text: Bandwidth as written in the library (SimGrid units, e.g. ``"10.0Gbps"``).
    """

    type: str
    bandwidth: float
    latency: float
    bandwidth_text: str


#: A cluster layout: cluster id, (node type, number of such nodes) pairs, local links or None.
ClusterLayout = tuple[str, Sequence[tuple[NodeType, int]], "LinkSpec | None"]


def _host_name_width(nb_cores: int) -> int:
    return max(4, len(str(max(nb_cores - 1, 0))))


@dataclass(eq=False)
class ResourceHierarchy:
    """Clusters, nodes, processors and cores of a platform as flat numpy arrays.

    Build it with :meth:`from_layout` (HDeepRM platforms, usually through
    :func:`hdeeprm.platform.load_platform`) or :meth:`from_hosts` (platforms
    read from SimGrid XML). All int arrays are int64, all float arrays float64.

    Attributes:
        nb_clusters: Number of clusters.
        nb_nodes: Number of nodes.
        nb_processors: Number of processors.
        nb_cores: Number of cores (= Batsim hosts, without the master host).
        core_processor: Processor of each core, shape (nb_cores,).
        core_node: Node of each core, shape (nb_cores,).
        core_speed: Peak speed G of each core in FLOP/s, shape (nb_cores,).
        core_power: Power P of each core in watts (processor TDP / cores), shape (nb_cores,).
        processor_node: Node of each processor, shape (nb_processors,).
        processor_first_core: First core of each processor, shape (nb_processors,).
        processor_n_cores: Cores of each processor, shape (nb_processors,).
        processor_speed: Per-core peak speed G of each processor in FLOP/s, shape (nb_processors,).
        processor_power: Per-core power P of each processor in watts, shape (nb_processors,).
        processor_mem_bw: Memory bandwidth of each processor in GB/s, shape (nb_processors,).
        processor_type: Processor type name of each processor, length nb_processors.
        node_cluster: Cluster of each node, shape (nb_nodes,).
        node_first_processor: First processor of each node, shape (nb_nodes,).
        node_n_processors: Processors of each node, shape (nb_nodes,).
        node_first_core: First core of each node, shape (nb_nodes,).
        node_n_cores: Cores of each node, shape (nb_nodes,).
        node_memory: Memory of each node in MB (library capacity in GB x 1024;
            ``inf`` when unknown), shape (nb_nodes,).
        node_type: Node type name of each node, length nb_nodes.
        cluster_id: Identifier of each cluster, length nb_clusters.
        cluster_first_node: First node of each cluster, shape (nb_clusters,).
        cluster_n_nodes: Nodes of each cluster, shape (nb_clusters,).
        cluster_links: Local links of each cluster (None = not described), length nb_clusters.
        global_links: Links between clusters (None = not described).
        reference_speed: Mean of ``core_speed`` in FLOP/s; turns trace seconds into FLOP.
        host_names: Batsim/SimGrid host name of each core, length nb_cores. They are
            zero-padded (``core0000``...) so that their byte-wise order, which is
            how Batsim numbers hosts, is the core order.
    """

    core_processor: np.ndarray
    processor_node: np.ndarray
    processor_n_cores: np.ndarray
    processor_speed: np.ndarray
    processor_power: np.ndarray
    processor_mem_bw: np.ndarray
    processor_type: list[str]
    node_cluster: np.ndarray
    node_memory: np.ndarray
    node_type: list[str]
    cluster_id: list[str]
    cluster_links: list[LinkSpec | None] = field(default_factory=list)
    global_links: LinkSpec | None = None
    host_names: list[str] = field(default_factory=list)
    _hosts: list[HostSpec] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.nb_cores = int(self.core_processor.shape[0])
        self.nb_processors = int(self.processor_node.shape[0])
        self.nb_nodes = int(self.node_cluster.shape[0])
        self.nb_clusters = len(self.cluster_id)
        self.processor_first_core = _starts(self.processor_n_cores)
        self.core_node = self.processor_node[self.core_processor]
        self.core_speed = self.processor_speed[self.core_processor]
        self.core_power = self.processor_power[self.core_processor]
        self.node_n_processors = np.bincount(self.processor_node, minlength=self.nb_nodes).astype(np.int64)
        self.node_first_processor = _starts(self.node_n_processors)
        self.node_n_cores = np.bincount(self.core_node, minlength=self.nb_nodes).astype(np.int64)
        self.node_first_core = _starts(self.node_n_cores)
        self.cluster_n_nodes = np.bincount(self.node_cluster, minlength=self.nb_clusters).astype(np.int64)
        self.cluster_first_node = _starts(self.cluster_n_nodes)
        if not self.cluster_links:
            self.cluster_links = [None] * self.nb_clusters
        self.reference_speed = float(self.core_speed.mean()) if self.nb_cores else 0.0
        if not self.host_names:
            width = _host_name_width(self.nb_cores)
            self.host_names = [f"core{i:0{width}d}" for i in range(self.nb_cores)]

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_layout(cls, clusters: Sequence[ClusterLayout], processor_types: Mapping[str, ProcessorType],
                    global_links: LinkSpec | None = None) -> ResourceHierarchy:
        """Build the hierarchy of an HDeepRM platform from resolved library types.

        Nodes are numbered cluster by cluster in the order given, processors
        node by node in the node type's slot order, cores processor by processor.

        Args:
            clusters: ``(cluster id, [(node type, number of nodes), ...], local links)`` per cluster.
            processor_types: Processor types by name; must hold every type the node types name.
            global_links: Links between clusters, or None.

        Returns:
            The hierarchy.

        Raises:
            KeyError: A node type names a processor type missing from ``processor_types``
                (the loader checks this first and raises a PlatformError with a suggestion).
        """
        proc_node: list[np.ndarray] = []
        proc_type_idx: list[np.ndarray] = []
        node_cluster: list[int] = []
        node_memory: list[float] = []
        node_type: list[str] = []
        type_index: dict[str, int] = {}
        for c, (_cid, entries, _links) in enumerate(clusters):
            for ntype, number in entries:
                slots = [type_index.setdefault(name, len(type_index)) for name, count in ntype.processors
                         for _ in range(count)]
                first = len(node_cluster)
                node_cluster.extend([c] * number)
                node_memory.extend([ntype.memory_capacity * 1024.0] * number)
                node_type.extend([ntype.name] * number)
                proc_node.append(np.repeat(np.arange(first, first + number, dtype=np.int64), len(slots)))
                proc_type_idx.append(np.tile(np.asarray(slots, dtype=np.int64), number))
        type_names = list(type_index)
        ptypes = [processor_types[name] for name in type_names]
        idx = np.concatenate(proc_type_idx) if proc_type_idx else np.zeros(0, np.int64)
        nb_cores_t = np.array([p.cores for p in ptypes], dtype=np.int64)
        speed_t = np.array([p.core_speed for p in ptypes], dtype=np.float64)
        power_t = np.array([p.core_power for p in ptypes], dtype=np.float64)
        bw_t = np.array([float(p.mem_bw) for p in ptypes], dtype=np.float64)
        processor_n_cores = nb_cores_t[idx] if len(ptypes) else np.zeros(0, np.int64)
        return cls(
            core_processor=np.repeat(np.arange(idx.shape[0], dtype=np.int64), processor_n_cores),
            processor_node=np.concatenate(proc_node) if proc_node else np.zeros(0, np.int64),
            processor_n_cores=processor_n_cores,
            processor_speed=speed_t[idx] if len(ptypes) else np.zeros(0),
            processor_power=power_t[idx] if len(ptypes) else np.zeros(0),
            processor_mem_bw=bw_t[idx] if len(ptypes) else np.zeros(0),
            processor_type=[type_names[i] for i in idx.tolist()],
            node_cluster=np.asarray(node_cluster, dtype=np.int64),
            node_memory=np.asarray(node_memory, dtype=np.float64),
            node_type=node_type,
            cluster_id=[cid for cid, _e, _l in clusters],
            cluster_links=[links for _c, _e, links in clusters],
            global_links=global_links,
        )

    @classmethod
    def from_hosts(cls, hosts: Sequence[HostSpec]) -> ResourceHierarchy:
        """Build a flat hierarchy from SimGrid hosts (e.g. read from a SimGrid XML platform).

        Each host becomes one core of its own 1-core processor on its own node,
        all in one cluster ``"simgrid"``. Hosts are ordered by the byte-wise
        order of their names, which is how Batsim numbers them, so core i is
        Batsim host i. G is the pstate-0 speed, P the pstate-0 computing
        wattage; memory is unlimited (``inf`` MB) and memory bandwidth
        unlimited (``inf`` GB/s), since SimGrid platforms describe neither.
        :meth:`host_specs` returns the given hosts unchanged (in that order).

        Args:
            hosts: The compute hosts (without the master host).

        Returns:
            The hierarchy.
        """
        ordered = sorted(hosts, key=lambda h: h.name.encode())
        n = len(ordered)
        ar = np.arange(n, dtype=np.int64)
        return cls(
            core_processor=ar.copy(),
            processor_node=ar.copy(),
            processor_n_cores=np.ones(n, dtype=np.int64),
            processor_speed=np.array([h.speeds[0] for h in ordered], dtype=np.float64),
            processor_power=np.array([h.computing_watts[0] for h in ordered], dtype=np.float64),
            processor_mem_bw=np.full(n, np.inf),
            processor_type=["simgrid_host"] * n,
            node_cluster=np.zeros(n, dtype=np.int64),
            node_memory=np.full(n, np.inf),
            node_type=["simgrid_host"] * n,
            cluster_id=["simgrid"],
            host_names=[h.name for h in ordered],
            _hosts=list(ordered),
        )

    # ------------------------------------------------------------------ views
    def pstate_speeds(self) -> np.ndarray:
        """Computing speed of every core in every pstate, in FLOP/s.

        Returns:
            float64 array of shape (nb_cores, N_PSTATES): G x PSTATE_SPEED_FACTORS
            (0 for the idle pstates P2 and P3), rounded to 12 significant digits.
        """
        return _round_significant(np.outer(self.core_speed, np.asarray(PSTATE_SPEED_FACTORS)))

    def pstate_powers(self) -> np.ndarray:
        """Power of every core in every pstate, in watts.

        Returns:
            float64 array of shape (nb_cores, N_PSTATES): P x PSTATE_POWER_FACTORS, rounded to
            12 significant digits (so that 0.05 x 9.5 W is 0.475 W, not 0.47500000000000003 W,
            in the engine and in the exported XML alike).
        """
        return _round_significant(np.outer(self.core_power, np.asarray(PSTATE_POWER_FACTORS)))

    def host_specs(self) -> list[HostSpec]:
        """One SimGrid host per core, in core order, with the four pstates of this module.

        Speeds per pstate: G, 0.75 G, then :data:`IDLE_PSTATE_SPEED` for P2 and
        P3; idle and computing watts per pstate: P, P, 0.25 P, 0.05 P; initial
        pstate P3. Properties: ``cluster`` (cluster id), ``node`` and
        ``processor`` (global indices), ``node_type`` and ``processor_type``.
        A hierarchy built by :meth:`from_hosts` returns its hosts unchanged.

        Returns:
            ``nb_cores`` host specs; spec i is named ``host_names[i]``.
        """
        if self._hosts is not None:
            return list(self._hosts)
        speeds = self.pstate_speeds()
        speeds[:, P2:] = IDLE_PSTATE_SPEED
        watts = self.pstate_powers()
        specs = []
        cproc = self.core_processor.tolist()
        cnode = self.core_node.tolist()
        ncluster = self.node_cluster.tolist()
        for i, name in enumerate(self.host_names):
            w = tuple(watts[i].tolist())
            p, n = cproc[i], cnode[i]
            specs.append(HostSpec(
                name=name, speeds=tuple(speeds[i].tolist()), idle_watts=w, computing_watts=w,
                initial_pstate=INITIAL_PSTATE,
                properties={"cluster": self.cluster_id[ncluster[n]], "node": str(n), "processor": str(p),
                            "node_type": self.node_type[n], "processor_type": self.processor_type[p]}))
        return specs

    def summary(self) -> dict[str, float | int]:
        """Totals of the platform.

        Returns:
            ``clusters``, ``nodes``, ``processors``, ``cores`` (ints);
            ``peak_gflops`` (sum of G over cores, GFLOP/s); ``mean_core_gflops``
            (reference speed, GFLOP/s); ``max_power_w`` (sum of P over cores:
            every core computing, watts); ``memory_gb`` (sum of node memory, GB).
        """
        return _totals(self, slice(None), self.nb_clusters)

    def cluster_summaries(self) -> list[dict[str, float | int | str]]:
        """The :meth:`summary` totals of each cluster, with its ``id``, in cluster order."""
        rows = []
        for c, cid in enumerate(self.cluster_id):
            first = int(self.cluster_first_node[c])
            nodes = slice(first, first + int(self.cluster_n_nodes[c]))
            rows.append({"id": cid, **_totals(self, nodes, 1)})
        return rows


def _totals(h: ResourceHierarchy, nodes: slice, nb_clusters: int) -> dict[str, float | int]:
    nb_first = nodes.start or 0
    nb_last = h.nb_nodes if nodes.stop is None else nodes.stop
    if nb_last > nb_first:
        p0 = int(h.node_first_processor[nb_first])
        p1 = int(h.node_first_processor[nb_last - 1] + h.node_n_processors[nb_last - 1])
        c0 = int(h.node_first_core[nb_first])
        c1 = int(h.node_first_core[nb_last - 1] + h.node_n_cores[nb_last - 1])
    else:
        p0 = p1 = c0 = c1 = 0
    speed = h.core_speed[c0:c1]
    return {
        "clusters": nb_clusters,
        "nodes": nb_last - nb_first,
        "processors": p1 - p0,
        "cores": c1 - c0,
        "peak_gflops": float(speed.sum()) / 1e9,
        "mean_core_gflops": float(speed.mean()) / 1e9 if c1 > c0 else 0.0,
        "max_power_w": float(h.core_power[c0:c1].sum()),
        "memory_gb": float(h.node_memory[nb_first:nb_last].sum()) / 1024.0,
    }


def _round_significant(values: np.ndarray, digits: int = 12) -> np.ndarray:
    """Round every element to ``digits`` significant decimal digits (zeros and non-finite values kept)."""
    out = values.astype(np.float64, copy=True)
    mask = np.isfinite(out) & (out != 0)
    if mask.any():
        scale = 10.0 ** (digits - 1 - np.floor(np.log10(np.abs(out[mask]))))
        out[mask] = np.round(out[mask] * scale) / scale
    return out


def _starts(counts: np.ndarray) -> np.ndarray:
    """First index of each group given group sizes (exclusive cumulative sum), int64."""
    out = np.zeros(counts.shape[0], dtype=np.int64)
    if counts.shape[0] > 1:
        np.cumsum(counts[:-1], out=out[1:])
    return out
