"""The placement state's shortcuts give what the full computations give, on the real openb cluster and pods.

``PlacementState.fits`` reads per-node sums (largest free share, whole free GPUs) kept by ``place``/``release``;
``fgd`` reuses each node's score while the node is unchanged (``PlacementState.cached_scores``);
``GpuManager.first_part_fits`` tests each queued shape once; a node's fragmentation is remembered by node state.
Each is checked here against the rule it replaces,
after thousands of placements and releases.
"""
import numpy as np
import pytest

from hdeeprm.decision.fragmentation import frag_numerator, gpu_fit_counts, typical_pods
from hdeeprm.decision.gpu_placement import PlacementState, PodRequest, gpu_fits
from hdeeprm.decision.gpu_scoring import GPU_PLACEMENTS, _fgd_scores
from hdeeprm.platform.openb import read_openb_nodes
from hdeeprm.run.placement import pod_requests
from hdeeprm.workload.openb import read_openb_pods


@pytest.fixture(scope="module")
def openb(shared):
    gpu = shared / "traces" / "gpu"
    cluster = read_openb_nodes(gpu / "openb_node_list_gpu_node.csv")
    pods = read_openb_pods(gpu / "openb_pod_list_default.csv")
    return cluster, pods


def _full_fit_rule(state: PlacementState, pod: PodRequest) -> np.ndarray:
    """The filter as it reads in the module docstring, computed from the per-GPU arrays alone."""
    ok = (state.cpu_left >= pod.cpu) & (state.memory_left >= pod.memory)
    if pod.num_gpu:
        ok &= pod.allowed[state.model]
        ok &= gpu_fits(state.gpu_left, state.gpu_memory_left, pod).sum(axis=1) >= pod.num_gpu
    return ok


@pytest.mark.slow
def test_fgd_cached_scores_and_fit_sums_match_a_recomputation_through_placements_and_releases(openb):
    cluster, pods = openb
    typical = typical_pods(pods, cluster.models)
    requests = pod_requests(pods, cluster.models)
    state = PlacementState(cluster, typical)
    rng = np.random.default_rng(23)
    rank = rng.permutation(cluster.nb_nodes)
    fgd = GPU_PLACEMENTS["fgd"]
    held, checked = [], 0
    # Some extra shapes the trace lacks: a shared GPU with a GPU memory need, two half GPUs (not "sharing").
    extra = [PodRequest(2000, 0, 1, 300, requests[0].allowed, gpu_memory=4096),
             PodRequest(2000, 0, 2, 500, requests[0].allowed)]
    for step in range(3000):
        pod = requests[int(rng.integers(len(requests)))] if step % 10 else extra[step // 10 % 2]
        assert np.array_equal(state.fits(pod), _full_fit_rule(state, pod))
        nodes = state.fitting_nodes(pod)
        if len(nodes) == 0:
            continue
        if pod.num_gpu and pod.gpu_milli <= 1000 and not (pod.num_gpu > 1 and pod.gpu_milli < 1000):
            scores, gpus = fgd.score(state, pod, nodes, rng)
            fresh, fresh_gpus = _fgd_scores(state, pod, nodes)
            assert np.array_equal(scores, fresh)
            assert (gpus is None) == (fresh_gpus is None) and (gpus is None or np.array_equal(gpus, fresh_gpus))
            checked += 1
            node = int(nodes[np.argmax(scores - rank[nodes] / len(rank))])
            chosen = gpus[list(nodes).index(node):][:1] if gpus is not None else state.choose_gpus(node, pod, "best",
                                                                                                    rng)
        else:
            node = int(rng.choice(nodes))
            chosen = state.choose_gpus(node, pod, "best", rng)
        state.place(node, chosen, pod)
        held.append((node, chosen, pod))
        if rng.random() < 0.4:   # a finished pod gives its resources back
            node, chosen, pod = held.pop(int(rng.integers(len(held))))
            state.release(node, chosen, pod)
        assert np.array_equal(state.most_left, state.gpu_left.max(axis=1))
        assert np.array_equal(state.whole_free, (state.gpu_left >= 1000).sum(axis=1))
        if step % 50 == 0:   # the memoised per-node fragmentation against the whole cluster's, recomputed
            count, below = gpu_fit_counts(state.gpu_left, typical)
            frag = frag_numerator(state.cpu_left, state.total_left, count, below, state.model, typical)
            assert np.array_equal(state.count, count) and np.array_equal(state.below, below)
            assert np.array_equal(state.frag, frag)
    assert checked > 2000 and len(held) > 500


@pytest.mark.slow
def test_first_part_fits_is_the_fitting_mask_of_every_shown_job(shared):
    import gymnasium

    env = gymnasium.make("hdeeprm/GpuJobSlot-v0", platform="platforms/mixed_cpu_gpu.json", workload="philly:derived",
                         nb_jobs=200, first_job=20_000).unwrapped
    rng = np.random.default_rng(4)
    _, info = env.reset(seed=0)
    seen_blocked = 0
    for _ in range(300):
        manager = env.replay.manager
        queue = manager.ordered_queue()
        expected = [bool(manager.fitting_mask(job).any()) for job in queue]
        assert manager.first_part_fits(queue) == expected
        seen_blocked += expected.count(False)
        mask = info["action_mask"]
        _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(mask))) if mask.any() else env.slots)
        if terminated:
            break
    assert seen_blocked > 0   # the window queues: some shown jobs fit nowhere at some decisions
