import numpy as np

from hdeeprm.decision.fragmentation import fragmentation, typical_pods
from hdeeprm.outputs.gpu_metrics import value_at_arrived
from hdeeprm.workload.openb import openb_pods


def test_typical_pods_cover_the_popular_shapes():
    # 10 pods: 5 x (1000 CPU, share 500), 3 x (2000 CPU, whole GPU), 1 CPU-only, 1 x (4000 CPU, 2 GPUs, on T4).
    pods = openb_pods([*[("s", 1000, 1, 1, 500, "")] * 5, *[("w", 2000, 1, 1, 1000, "")] * 3, ("c", 500, 1, 0, 0, ""),
                       ("m", 4000, 1, 2, 1000, "T4")])
    typical = typical_pods(pods, ("T4", "P100"), popularity=0.85)
    # counts 5, 3, then a tie 1/1 broken by the larger CPU first: (4000, 2 GPUs) before (500, CPU-only).
    assert typical.weight.tolist() == [5, 3, 1] and typical.cpu_milli.tolist() == [1000, 2000, 4000]
    assert typical.allowed.tolist() == [[True, True, False], [True, True, False], [True, False, False]]
    assert typical_pods(pods, ("T4", "P100")).total == 10


def test_fragmentation_by_hand():
    # One node, 4 GPUs with [1000, 1000, 600, 200] free, 8000 CPU free; typical pods (weights):
    #   share 500 (2): fits; fragment = GPUs below 500 = 200
    #   two whole GPUs (1): fits; fragment = 600 + 200 = 800
    #   CPU-only (1): fragment = all idle = 2800
    # amount = (2 x 200 + 800 + 2800) / 4 = 1000; idle 2800.
    pods = openb_pods([("s", 1000, 1, 1, 500, ""), ("s2", 1000, 1, 1, 500, ""), ("w", 1000, 1, 2, 1000, ""),
                       ("c", 1000, 1, 0, 0, "")])
    typical = typical_pods(pods, ("T4",))
    frag = fragmentation(np.array([8000]), np.array([[1000, 1000, 600, 200]]), np.array([0]), typical)
    assert (frag.amount, frag.idle) == (1000.0, 2800)
    # Without CPU the GPU pods cannot run: everything idle is fragmented.
    frag = fragmentation(np.array([500]), np.array([[1000, 1000, 600, 200]]), np.array([0]), typical)
    assert (frag.amount, frag.ratio) == (2800.0, 1.0)


def test_value_at_arrived_reads_like_the_artifact():
    capacity = 1000
    arrived = np.array([100, 300, 995, 1004, 1200])
    allocated = np.array([100, 300, 900, 905, 910])
    out = value_at_arrived(arrived, allocated, capacity, np.array([10, 30, 100, 101, 119, 50]))
    # 100 %: steps at 99.5 % (rounds to 100, half to even) and 100.4 %: mean of 90.0 and 90.5; 101 %: none, so
    # 100..102 %; 119 %: 118..120 % has the 120 % step; 50 %: nothing near.
    assert out[:5].tolist() == [10.0, 30.0, 90.25, 90.25, 91.0] and np.isnan(out[5])
