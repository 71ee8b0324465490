"""Hand-worked placements on tiny GPU clusters (scores computed by hand in the comments)."""
import numpy as np
import pytest

from hdeeprm.decision.gpu_choices import FewestFreeChoices, PolicyChoices, place_job, select_node
from hdeeprm.decision.gpu_placement import PlacementState, PodRequest
from hdeeprm.decision.gpu_scoring import GPU_PLACEMENTS, fgd_score, placement_policy
from hdeeprm.errors import OptionsError
from hdeeprm.decision.fragmentation import allowed_models, fragmentation, typical_pods
from hdeeprm.outputs.gpu_metrics import allocation_rate
from hdeeprm.platform.openb import gpu_cluster
from hdeeprm.workload.openb import openb_pods

RNG = np.random.default_rng(0)


def request(cluster, cpu, num, milli, spec=""):
    return PodRequest(cpu, 1, num, milli, allowed_models(tuple(m for m in spec.split("|") if m), cluster.models))


def place(state, pod, policy, rank=None):
    rank = np.arange(state.cluster.nb_nodes) if rank is None else rank
    placed = select_node(state, pod, GPU_PLACEMENTS[policy], rank, RNG)
    if placed is not None:
        state.place(*placed, pod)
    return placed


def test_fgd_keeps_a_whole_gpu_free():
    # Node a: one free GPU. Node b: GPU0 half used (500 left), GPU1 free. Typical pod: one whole GPU.
    # A 500-milli pod on a -> a = [500]: the whole-GPU pod no longer fits, a's fragment 0 -> 500: decrease -500,
    #   score int(100 sigmoid(-0.5)) = 37.
    # On b GPU0 -> b = [0, 1000]: b's fragment (GPUs below 1000) 500 -> 0: decrease +500, score 62.
    # On b GPU1 -> b = [500, 500]: the whole pod no longer fits, fragment 500 -> 1000: score 37.
    cluster = gpu_cluster([("a", 8000, 64, 1, "T4"), ("b", 8000, 64, 2, "T4")])
    typical = typical_pods(openb_pods([("w", 1000, 1, 1, 1000, "")]), cluster.models)
    state = PlacementState(cluster, typical)
    state.place(1, np.array([0]), request(cluster, 1000, 1, 500))
    assert list(fgd_score(np.array([-500, 500]), 1)) == [37, 62]
    node, gpus = place(state, request(cluster, 1000, 1, 500), "fgd")
    assert (node, list(gpus)) == (1, [0])
    assert state.gpu_left.tolist() == [[1000, 0], [0, 1000]]  # a's only GPU (padded row) stays whole
    assert fragmentation(state.cpu_left, state.gpu_left, state.model, typical).amount == 0.0


def test_first_fit_breaks_the_whole_gpu_that_fgd_keeps():
    cluster = gpu_cluster([("a", 8000, 64, 1, "T4"), ("b", 8000, 64, 2, "T4")])
    state = PlacementState(cluster)
    state.place(1, np.array([0]), request(cluster, 1000, 1, 500))
    assert place(state, request(cluster, 1000, 1, 500), "first_fit") == (0, [0])


def test_fractional_and_whole_gpu_jobs_on_one_two_gpu_node():
    cluster = gpu_cluster([("n", 16000, 64, 2, "V100M16")])
    typical = typical_pods(openb_pods([("w", 1000, 1, 1, 1000, "")]), cluster.models)
    state = PlacementState(cluster, typical)
    node, gpus = place(state, request(cluster, 2000, 1, 300), "best_fit")  # shares GPU 0 (tightest, first)
    assert (node, list(gpus), state.gpu_left[0].tolist()) == (0, [0], [700, 1000])
    node, gpus = place(state, request(cluster, 2000, 1, 1000), "best_fit")  # the whole GPU left
    assert (node, list(gpus), state.gpu_left[0].tolist()) == (0, [1], [700, 0])
    assert place(state, request(cluster, 2000, 1, 1000), "best_fit") is None  # 700 free is no whole GPU
    assert place(state, request(cluster, 2000, 1, 700), "best_fit") == (0, [0])  # but fits a 700 share
    assert allocation_rate(state.gpu_left, cluster.nb_gpus) == 1.0
    state = PlacementState(cluster, typical)
    place(state, request(cluster, 2000, 1, 300), "fgd")
    assert place(state, request(cluster, 2000, 2, 1000), "fgd") is None  # two whole GPUs no longer exist
    frag = fragmentation(state.cpu_left, state.gpu_left, state.model, typical)
    assert (frag.amount, frag.idle, frag.ratio) == (700.0, 1700, 700 / 1700)  # GPU 0's 700 cannot host it


@pytest.mark.parametrize("policy", GPU_PLACEMENTS.names())
def test_pod_fits_only_on_an_allowed_type(policy):
    cluster = gpu_cluster([("t4", 32000, 64, 4, "T4"), ("v100", 32000, 64, 2, "V100M16"), ("g2", 32000, 64, 8, "G2")])
    state = PlacementState(cluster, typical_pods(openb_pods([("w", 1000, 1, 1, 1000, "")]), cluster.models))
    assert place(state, request(cluster, 1000, 1, 1000, "V100M16|V100M32"), policy)[0] == 1
    assert place(state, request(cluster, 1000, 2, 1000, "V100M16"), policy) is None  # one V100 left
    assert place(state, request(cluster, 1000, 1, 500, "A10"), policy) is None  # no A10 at all
    assert place(state, request(cluster, 1000, 0, 0, "A10"), policy) is not None  # CPU-only: no GPU type needed


def test_cpu_and_memory_are_checked():
    cluster = gpu_cluster([("a", 4000, 64, 2, "T4"), ("b", 16000, 8, 2, "T4")])
    state = PlacementState(cluster)
    assert list(state.fitting_nodes(PodRequest(8000, 16, 1, 1000, allowed_models((), cluster.models)))) == []
    assert list(state.fitting_nodes(PodRequest(4000, 8, 1, 1000, allowed_models((), cluster.models)))) == [0, 1]


def test_integer_scores_of_packing_clustering_and_best_fit():
    # Largest node: 32000 milli-CPU, 4 GPUs (gpu_norm 4000).
    cluster = gpu_cluster([("a", 32000, 64, 4, "T4"), ("b", 32000, 64, 4, "T4"), ("c", 16000, 64, 2, "T4")])
    state = PlacementState(cluster)
    state.place(0, np.array([0]), request(cluster, 8000, 1, 600))  # a: [400, 1000, 1000, 1000], 24000 CPU left
    nodes = np.arange(3)
    pod = request(cluster, 8000, 1, 300)
    packing = GPU_PLACEMENTS["gpu_packing"].score(state, pod, nodes, RNG)[0]
    # a: shared GPU with 400 left -> 100 - (400 x 100 // 1000) // 10 = 96; b: idle, 4 free -> max(33 - 4, 4) = 29;
    # c: idle, 2 free -> max(33 - 2, 2) = 31.
    assert packing.tolist() == [96, 29, 31]
    clustering = GPU_PLACEMENTS["gpu_clustering"].score(state, pod, nodes, RNG)[0]
    # a runs only shared-GPU pods: 25 x (4000 - 3400) // 4000 + 75 = 78; b, c idle: 25 x (4000 - left) // 4000 + 25
    # with 4000 and 2000 left: 25 and 37 (the measure is against the largest node, so smaller nodes score higher).
    assert clustering.tolist() == [78, 25, 37]
    best = GPU_PLACEMENTS["best_fit"].score(state, pod, nodes, RNG)[0]
    # a: 1 - ((24000 - 8000) / 32000 x 0.5 + (3400 - 300) / 4000 x 0.5) = 0.3625 -> 36; b: 1 - (0.375 + 0.4625)
    # = 0.1625 -> 16; c: 1 - (0.125 + 0.2125) = 0.6625 -> 66.
    assert best.tolist() == [36, 16, 66]


def test_ties_go_to_the_lowest_rank_and_unknown_names_are_suggested():
    cluster = gpu_cluster([("a", 8000, 64, 1, "T4"), ("b", 8000, 64, 1, "T4"), ("c", 8000, 64, 1, "T4")])
    state = PlacementState(cluster)
    assert place(state, request(cluster, 1000, 1, 1000), "best_fit", np.array([2, 0, 1]))[0] == 1
    with pytest.raises(OptionsError, match="unknown GPU placement policy 'fdg'.*did you mean 'fgd'"):
        GPU_PLACEMENTS["fdg"]
    # the ATC'23 plug-ins keep their registration indices (the ATC'23 runs seed each policy with it)
    assert GPU_PLACEMENTS.names() == ("random", "first_fit", "best_fit", "worst_fit", "dot_product", "gpu_packing",
                                      "gpu_clustering", "fgd", "high_gflops", "low_power")


def test_fgd_incremental_scores_match_a_full_recomputation():
    rng = np.random.default_rng(7)
    models = ["T4", "V100M16", "G2"]
    cluster = gpu_cluster([(f"n{i}", int(rng.choice([16000, 32000, 96000])), 10**6, int(rng.choice([1, 2, 4, 8])),
                            models[i % 3]) for i in range(40)])
    shapes = [("s", 4000, 1, 1, 500, ""), ("t", 2000, 1, 1, 250, ""), ("w", 8000, 1, 1, 1000, ""),
              ("m", 16000, 1, 2, 1000, ""), ("c", 1000, 1, 0, 0, ""), ("v", 4000, 1, 1, 1000, "V100M16|T4")]
    typical = typical_pods(openb_pods([(f"{s[0]}{k}", *s[1:]) for k, s in enumerate(shapes * 3)]), cluster.models)
    state = PlacementState(cluster, typical)
    for _ in range(120):  # a random partly filled state
        pod = request(cluster, int(rng.integers(0, 8)) * 1000, 1, int(rng.choice([100, 250, 500, 700, 1000])))
        nodes = state.fitting_nodes(pod)
        if len(nodes):
            node = int(rng.choice(nodes))
            state.place(node, state.choose_gpus(node, pod, "random", rng), pod)
    for pod in (request(cluster, 3000, 1, 300), request(cluster, 3000, 1, 500), request(cluster, 8000, 2, 1000),
                request(cluster, 2000, 0, 0)):
        nodes = state.fitting_nodes(pod)
        scores, gpus = GPU_PLACEMENTS["fgd"].score(state, pod, nodes, rng)
        for k, node in enumerate(nodes):
            options = np.flatnonzero(state.gpu_left[node] >= pod.gpu_milli) if pod.shares_gpu else [None]
            best = None
            for gpu in options:
                cpu, left = state.cpu_left.copy(), state.gpu_left.copy()
                cpu[node] -= pod.cpu
                taken = [gpu] if gpu is not None else state.choose_gpus(node, pod, "best", rng)
                left[node, taken] -= pod.gpu_milli
                before = fragmentation(state.cpu_left[[node]], state.gpu_left[[node]], state.model[[node]], typical)
                after = fragmentation(cpu[[node]], left[[node]], state.model[[node]], typical)
                score = int(fgd_score(np.array([(before.amount - after.amount) * typical.total]), typical.total)[0])
                if best is None or score > best[0]:
                    best = (score, gpu)
            assert scores[k] == best[0]
            if pod.shares_gpu:
                assert gpus[k] == best[1]


def _typed_cluster():
    # One node per GPU type, 8000 milli-CPU each (the largest: cpu_norm 8000, 2 GPUs: gpu_norm 2000). FP32 peak rates
    # and TDPs of the GPU type library (vendor datasheets): T4 8.1 TFLOP/s 70 W, V100 PCIe 14.0 TFLOP/s 250 W,
    # A100 SXM4 19.5 TFLOP/s 400 W.
    return gpu_cluster([("t4", 8000, 64, 1, "T4"), ("v100", 8000, 64, 1, "V100 PCIe 32GB"),
                        ("a100", 8000, 64, 1, "A100 SXM4 40GB"), ("a100x2", 8000, 64, 2, "A100 SXM4 40GB")])


def test_high_gflops_takes_the_fastest_gpu_type_then_the_best_fit():
    cluster = _typed_cluster()
    state = PlacementState(cluster)
    # Run-time factor f = 15.7 / rate (reference V100 SXM2, FP32); speed key floor(1000 f_min / f) = floor(1000 x
    # rate / 19.5): T4 415, V100 PCIe 717, A100 1000.
    assert state.type_keys[0].tolist() == [415, 717, 1000, 0]
    pod = request(cluster, 1000, 1, 1000)
    # best_fit: 1 - (7000 / 8000 x 0.5 + GPU left after / 2000 x 0.5): 56 with no GPU left, 31 with one left.
    # Score key x 101 + best_fit: t4 415 x 101 + 56 = 41971, v100 72473, a100 101056, a100x2 101031.
    scores = GPU_PLACEMENTS["high_gflops"].score(state, pod, np.arange(4), RNG)[0]
    assert scores.tolist() == [41971, 72473, 101056, 101031]
    # The A100s first (the fuller one first: best fit), then the V100, then the T4.
    assert [place(state, pod, "high_gflops")[0] for _ in range(5)] == [2, 3, 3, 1, 0]
    assert place(state, pod, "high_gflops") is None
    # A CPU-only pod, which no GPU speeds up, is placed by best fit alone (every node: 1 - (0.4375 + GPU left)).
    cpu = request(cluster, 1000, 0, 0)
    assert GPU_PLACEMENTS["high_gflops"].score(PlacementState(cluster), cpu, np.arange(4), RNG)[0].tolist() == \
        GPU_PLACEMENTS["best_fit"].score(PlacementState(cluster), cpu, np.arange(4), RNG)[0].tolist()


def test_high_gflops_follows_the_runs_throughput_table():
    from hdeeprm.simulation.gpu_model import GpuSpeedModel

    cluster = _typed_cluster()
    # Measured: these jobs run 3x as fast on a T4 as on the reference type (factor 1/3), faster than on an A100
    # (factor 15.7 / 19.5 = 0.805): the T4 is the fastest type for this run.
    state = PlacementState(cluster, speed=GpuSpeedModel(throughput={"T4": 3.0}))
    # keys: T4 1000, V100 floor(1000 x (1/3) / (15.7/14)) = 297, A100 floor(1000 x (1/3) / (15.7/19.5)) = 414.
    assert state.type_keys[0].tolist() == [1000, 297, 414, 0]
    assert place(state, request(cluster, 1000, 1, 1000), "high_gflops")[0] == 0


def test_low_power_takes_the_lowest_tdp_then_the_best_fit():
    cluster = _typed_cluster()
    state = PlacementState(cluster)
    # Power key: max TDP - TDP = 400 - TDP: T4 330, V100 150, A100 0.
    assert state.type_keys[1].tolist() == [330, 150, 0, 0]
    pod = request(cluster, 1000, 1, 1000)
    assert [place(state, pod, "low_power")[0] for _ in range(5)] == [0, 1, 2, 3, 3]


def test_speed_and_power_score_together_with_weights():
    # T4 and A100 nodes: high_gflops scores 41971 and 101056, low_power 330 x 101 + 56 = 33386 and 56. Scaled
    # min-max to [0, 100] over the two nodes: high_gflops (0, 100), low_power (100, 0). With weights 2 and 1:
    # T4 100, A100 200 -> the A100; with 1 and 2: T4 200, A100 100 -> the T4.
    cluster = gpu_cluster([("t4", 8000, 64, 1, "T4"), ("a100", 8000, 64, 1, "A100 SXM4 40GB")])
    pod = request(cluster, 1000, 1, 1000)
    for spec, node in (("high_gflops:2+low_power:1", 1), ("high_gflops:1+low_power:2", 0),
                       ("high_gflops:1+best_fit:0.5", 1), ("low_power:1+best_fit:0.5", 0)):
        assert select_node(PlacementState(cluster), pod, placement_policy(spec), np.arange(2), RNG)[0] == node, spec


def test_every_fitting_node_is_offered_in_the_policys_order():
    # first_fit's order is the node order; best_fit's the score's, ties by the run's rank; the reservations' rule
    # (fewest free GPUs, ties by index). place_job keeps the first node the test accepts.
    cluster = gpu_cluster([("a", 8000, 64, 2, "T4"), ("b", 8000, 64, 1, "T4"), ("c", 8000, 64, 2, "T4")])
    state = PlacementState(cluster)
    pod = request(cluster, 1000, 1, 1000)
    offered = [node for node, _ in PolicyChoices(GPU_PLACEMENTS["best_fit"], np.array([2, 1, 0]), RNG)(state, pod, ())]
    assert offered == [1, 2, 0]   # b (no GPU left after: 56), then a and c (31) by rank: c (0) before a (2)
    assert [node for node, _ in FewestFreeChoices()(state, pod, ())] == [1, 0, 2]
    placed = place_job(state, [pod], PolicyChoices(GPU_PLACEMENTS["first_fit"], np.arange(3), RNG),
                       accept=lambda parts: parts[-1].node != 0)
    assert [(p.node, p.gpus.tolist()) for p in placed] == [(1, [0])] and state.gpu_left[1, 0] == 0
    assert place_job(state, [pod], PolicyChoices(GPU_PLACEMENTS["first_fit"], np.arange(3), RNG),
                     accept=lambda parts: False) is None
    assert state.gpu_left.tolist() == [[1000, 1000], [0, 0], [1000, 1000]]   # left as it was
