"""GPU node types, the shipped GPU platforms and the GPU table of ``hdeeprm-platform summary``."""
from __future__ import annotations

import json

import pytest

from hdeeprm.cli.platform import main
from hdeeprm.config.options import REPOSITORY
from hdeeprm.errors import PlatformError
from hdeeprm.platform import load_platform
from hdeeprm.platform.gpu_platform import load_gpu_cluster
from hdeeprm.platform.library import TypeLibrary

PLATFORMS = REPOSITORY / "platforms"


def test_shipped_gpu_platforms():
    dgx = load_gpu_cluster(PLATFORMS / "dgx_a100.json")
    assert (dgx.nb_nodes, dgx.nb_gpus, dgx.models) == (20, 160, ("A100 SXM4 40GB",))
    assert dgx.groupings == {"A100 SXM4 40GB": "NVLink"}
    assert dgx.cpu_milli[0] == 128 * 1000 and dgx.memory_mib[0] == 1024 * 1024
    mixed = load_gpu_cluster(PLATFORMS / "mixed_cpu_gpu.json")
    assert mixed.nb_nodes == 14 and mixed.nb_gpus == 4 * 2 + 2 * 8
    assert mixed.gpu_count.tolist() == [0] * 8 + [2] * 4 + [8] * 2
    assert mixed.names[0] == "cpu-0" and mixed.names[8] == "gpu-0"
    # the CPU model ignores the GPUs: the mixed platform still loads as cores
    assert load_platform(PLATFORMS / "mixed_cpu_gpu.json").nb_cores == 8 * 16 + 4 * 40 + 2 * 128


def _library(tmp_path, gpus):
    path = tmp_path / "lib.json"
    path.write_text(json.dumps({"GPU box": {"processors": [{"type": "Xeon E5-2660", "number": 2}],
                                            "memory": {"capacity": 64}, "gpus": gpus}}))
    return path


def test_gpu_node_type_errors(tmp_path):
    with pytest.raises(PlatformError, match=r"gpus\[0\].grouping must be one of NVLink, PCIe, got 'SLI'"):
        TypeLibrary.load([_library(tmp_path, [{"type": "T4", "number": 2, "grouping": "SLI"}])])
    with pytest.raises(PlatformError, match=r"gpus\[0\].number"):
        TypeLibrary.load([_library(tmp_path, [{"type": "T4", "number": 0}])])
    with pytest.raises(PlatformError, match=r"unknown|gpus\[0\]"):
        TypeLibrary.load([_library(tmp_path, [{"type": "T4", "nuber": 1}])])
    lib = _library(tmp_path, [{"type": "T4", "number": 1}, {"type": "A10", "number": 1}])
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps({"clusters": [{"nodes": [{"type": "GPU box", "number": 1}]}]}))
    with pytest.raises(PlatformError, match="mixes GPU models"):
        load_gpu_cluster(platform, extra_libraries=[lib])
    _library(tmp_path, [{"type": "T5", "number": 1}])
    with pytest.raises(PlatformError, match="must be a known gpu type, got 'T5'"):
        load_gpu_cluster(platform, extra_libraries=[lib])


def test_summary_shows_gpus(capsys):
    assert main(["summary", str(PLATFORMS / "mixed_cpu_gpu.json")]) == 0
    out = capsys.readouterr().out
    assert "GPUs (24 on 6 nodes)" in out
    assert "A100 SXM4 40GB  A100 SXM4 40GB  NVLink        2    16            640         312.0" in out
    assert main(["summary", str(PLATFORMS / "gaia_mini.json")]) == 0
    assert "GPU" not in capsys.readouterr().out   # CPU-only platforms print what they printed before


def test_summary_of_the_openb_node_list(shared, capsys):
    assert main(["summary", str(shared / "traces/gpu/openb_node_list_gpu_node.csv")]) == 0
    out = capsys.readouterr().out
    assert "GPUs (6212 on 1213 nodes)" in out
    assert "G2       openb G2        -           549  4392" in out
