import json

import pytest

from hdeeprm.errors import PlatformError
from hdeeprm.platform.gpu_types import GpuTypeLibrary, load_gpu_library

REQUIRED = ["V100 SXM2 16GB", "V100 SXM2 32GB", "A100 SXM4 40GB", "A100 SXM4 80GB", "A100 PCIe 40GB",
            "A100 PCIe 80GB", "H100 SXM5 80GB", "H100 PCIe 80GB", "L40S", "T4", "A10", "P100 PCIe 16GB", "MI250X"]
OPENB = {"V100M16": "V100 SXM2 16GB", "V100M32": "V100 SXM2 32GB", "P100": "P100 PCIe 16GB", "T4": "T4",
         "A10": "A10", "G2": "openb G2", "G3": "openb G3"}
GOOD = {"vendor": "X", "arch": "Y", "form_factor": "PCIe", "fp64": 1.0, "fp64_tensor": None, "fp32": 2.0,
        "tf32": None, "fp16": 8.0, "memory": 8, "mem_bw": 300, "tdp": 100, "idle_power": 10, "idle_estimate": True,
        "mig_instances": 0, "sharing": ["time-slicing"], "interconnect": "PCIe", "aliases": ["MYGPU"],
        "_source": "vendor datasheet"}


def write(tmp_path, entries):
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps(entries, indent=1))
    return path


def test_shipped_library_has_the_required_models_with_sources():
    lib = load_gpu_library()
    for name in REQUIRED:
        gpu = lib[name]
        assert gpu.source and gpu.memory > 0 and gpu.fp32 and gpu.fp16 and gpu.tdp
        assert gpu.idle_power < gpu.tdp
    assert lib["A100 SXM4 80GB"].mig_instances == 7 and "MIG" in lib["H100 PCIe 80GB"].sharing
    assert lib["A100 SXM4 80GB"].peak("tf32") == 156e12 and lib["V100 SXM2 16GB"].tf32 is None
    assert all(gpu.source for gpu in lib.types.values())


def test_openb_models_are_aliases():
    lib = load_gpu_library()
    assert {alias: lib[alias].name for alias in OPENB} == OPENB
    assert lib["G2"].fp32 is None and lib["G2"].tdp is None


def test_user_file_extends_and_overrides(tmp_path):
    lib = load_gpu_library([write(tmp_path, {"My GPU": GOOD, "T4": {**GOOD, "tdp": 75, "aliases": ["T4"]}})])
    assert lib["MYGPU"].name == "My GPU" and lib["T4"].tdp == 75.0
    assert load_gpu_library()["T4"].tdp == 70.0


@pytest.mark.parametrize("change, message", [
    ({"fp32": 1e19}, "gpu type 'Bad': fp32 must be a number in (0, 5000] TFLOP/s or null, got 1e+19"),
    ({"memory": None}, "gpu type 'Bad': memory must be a number in (0, 1024] GB, got null"),
    ({"idle_power": 150}, "gpu type 'Bad': idle_power must be below tdp, got 150 W >= 100.0 W"),
    ({"fp16": 0.1}, "gpu type 'Bad': fp16 (0.1) below a quarter of fp32 (2) TFLOP/s: check the units"),
    ({"mig_instances": 9}, "gpu type 'Bad': mig_instances must be an integer in 0..7, got 9"),
    ({"sharing": ["MIG"]}, "gpu type 'Bad': sharing lists MIG exactly when mig_instances > 0, got ['MIG'] and 0"),
    ({"_source": ""}, "gpu type 'Bad' must cite its source in '_source' (vendor datasheet name and URL)"),
    ({"tdpp": 3}, "gpu type 'Bad' has an unknown field 'tdpp' (did you mean 'tdp'?)"),
])
def test_bad_entries_are_rejected_with_one_line(tmp_path, change, message):
    path = write(tmp_path, {"Bad": {**GOOD, **change}})
    with pytest.raises(PlatformError) as err:
        GpuTypeLibrary.load([path], defaults=False)
    assert str(err.value) == f"{message} ({path}:2)"


def test_missing_rate_field_and_unknown_name(tmp_path):
    entry = dict(GOOD)
    del entry["fp64"]
    with pytest.raises(PlatformError, match="must have a 'fp64' field"):
        GpuTypeLibrary.load([write(tmp_path, {"Bad": entry})], defaults=False)
    with pytest.raises(PlatformError, match="got 'V100M61'; did you mean 'V100M16'"):
        load_gpu_library().lookup("V100M61", "model")
