"""``hdeeprm-launch`` with a ``gpu`` block: a timed GPU replay end to end."""
from __future__ import annotations

import csv
import json

import pytest

from hdeeprm.cli.launch import main
from hdeeprm.config.options import load_options, parse_options
from hdeeprm.errors import OptionsError
from hdeeprm.run.launch import launch

PHILLY_ROWS = ["timestamp,duration,num_gpus,gpu_time,cluster",
               "2017-10-01 00:00:00,100.0,8,800.0,a",     # the whole node for 100 s on the reference type
               "2017-10-01 00:00:10,50.0,1,50.0,a",       # waits for the node
               "2017-10-01 00:00:20,10.0,16,160.0,b",     # more GPUs than the platform: rejected
               ""]


def _inputs(tmp_path, **gpu):
    platform = tmp_path / "one_dgx.json"
    platform.write_text(json.dumps({"clusters": [{"id": "dgx", "nodes": [{"type": "DGX A100", "number": 1}]}]}))
    trace = tmp_path / "philly.csv"
    trace.write_text("\n".join(PHILLY_ROWS))
    options = tmp_path / "options.json"
    options.write_text(json.dumps({"seed": 3, "workload_file_path": "philly.csv", "platform_file_path": "one_dgx.json",
                                   "gpu": {"placement": "first_fit", "reference_type": "A100 SXM4 40GB", **gpu}}))
    return options


@pytest.mark.slow
def test_gpu_launch_writes_batsim_style_outputs(tmp_path, capsys):
    options = _inputs(tmp_path)
    assert main([str(options), "-o", str(tmp_path / "out"), "-q"]) == 0
    out = tmp_path / "out"
    rows = list(csv.DictReader(open(out / "out_jobs.csv")))
    by_id = {r["job_id"]: r for r in rows}
    assert [r["job_id"] for r in rows] == ["2", "0", "1"]   # completion order: the rejection at 20 s first
    assert by_id["0"]["allocated_gpus"] == "0-7" and by_id["0"]["finish_time"] == "100.000000"
    assert (by_id["1"]["starting_time"], by_id["1"]["finish_time"]) == ("100.000000", "150.000000")
    assert by_id["2"]["final_state"] == "REJECTED"
    assert by_id["2"]["metadata"] == "asks for 16 GPUs, the cluster has 8 allowed"
    metrics = json.loads((out / "out_metrics.json").read_text())
    assert metrics["nb_rejected"] == 1 and metrics["makespan"] == 150.0
    assert metrics["jct_median"] == pytest.approx((100 + 140) / 2)
    # 8 A100 40GB: idle 55 W, TDP 400 W; 8 busy GPUs for 100 s, then 1 for 50 s
    assert metrics["gpu_energy"] == pytest.approx(8 * 400 * 100 + (400 + 7 * 55) * 50)
    for name in ("episodes.csv", "makespans.log", "run.json", "out_gpu_timeline.csv", "out_schedule.csv", "jct_cdf.png",
                 "gpu_timeline.png"):
        assert (out / name).is_file()
    info = json.loads((out / "run.json").read_text())
    assert (info["status"], info["simulator"], info["platform"]["gpus"]) == ("finished", "gpu", 8)
    assert (info["workload"]["jobs"], info["workload"]["report"]["rows"]) == (3, 3)
    (out / "jct_cdf.png").write_bytes(b"stale")
    assert main([str(options), "-o", str(out), "-q"]) == 0   # the run owns its folder: a rerun replaces it
    assert (out / "jct_cdf.png").read_bytes() != b"stale"
    assert main([str(options), "-o", str(tmp_path / "out2")]) == 0
    printed = capsys.readouterr().out
    assert "gpu_allocation_rate" in printed
    # one name, one meaning: utilisation is allocated GPU time here; the fragmented share is over the capacity
    assert "(allocated GPU time / available, 0-1)" in printed and "busy core time" not in printed
    assert "gpu_fragmented_share" in metrics and "gpu_fragmentation_ratio" not in metrics
    assert (tmp_path / "out2" / "out_jobs.csv").read_bytes() == (out / "out_jobs.csv").read_bytes()


def test_gpu_launch_refuses_what_it_cannot_honour(tmp_path):
    options = _inputs(tmp_path)
    with pytest.raises(OptionsError, match="drop -a agent"):
        launch(options, agent_path="agent.py", outdir=tmp_path / "o")
    with pytest.raises(OptionsError, match="unknown key 'placment'.*did you mean 'placement'"):
        parse_options({"gpu": {"placment": "fgd"}})
    with pytest.raises(OptionsError, match="gpu.ordering must be one of"):
        parse_options({"gpu": {"ordering": "lifo"}})


def test_a_gpu_run_refuses_the_batsim_clock_in_one_line(tmp_path, capsys):
    """``clock`` "batsim" models Batsim's protocol; a GPU replay has no Batsim counterpart: refused, not ignored."""
    options = _inputs(tmp_path)
    data = json.loads(options.read_text())
    options.write_text(json.dumps({**data, "clock": "batsim"}))
    message = (f"clock 'batsim' does not apply to a GPU run (options with a 'gpu' block): its jobs are timed on the "
               f"exact clock (Batsim's protocol clock models a Batsim run, and Batsim has no GPU); drop clock or set "
               f"it to \"exact\" ({options})")
    with pytest.raises(OptionsError) as error:
        launch(options, outdir=tmp_path / "o")
    assert str(error.value) == message
    assert not (tmp_path / "o" / "run.json").exists()   # refused before the folder is claimed
    assert main([str(options), "-o", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"hdeeprm-launch: error: {message}\n"
    from hdeeprm.cli.check import main as check_main

    assert check_main([str(options)]) == 2   # hdeeprm-check refuses it the same way
    assert capsys.readouterr().err == f"hdeeprm-check: error: {message}\n"
    options.write_text(json.dumps({**data, "clock": "exact"}))   # the default, given: honoured as it is
    assert main([str(options), "-o", str(tmp_path / "o"), "-q"]) == 0


def test_cpu_options_keep_their_run_json_keys(tmp_path):
    assert "gpu" not in parse_options({"seed": 1}).to_dict()
    assert load_options(_inputs(tmp_path)).to_dict()["gpu"]["placement"] == "first_fit"


@pytest.mark.slow
def test_philly_window_on_the_shipped_dgx_platform(shared, tmp_path, monkeypatch):
    from hdeeprm.config.options import REPOSITORY

    monkeypatch.setenv("HDEEPRM_SHARED", str(shared))
    options = load_options(REPOSITORY / "examples" / "philly_dgx_a100_best_fit.json").replace(nb_jobs=400)
    result = launch(options, outdir=tmp_path / "out", quiet=True)
    metrics = result.metrics[0]
    assert metrics["nb_jobs"] == 400 and metrics["nb_completed"] + metrics["nb_rejected"] == 400
    assert 0 < metrics["gpu_allocation_rate"] <= 1 and metrics["energy"] > 0
    assert metrics["jct_p99"] >= metrics["jct_p95"] >= metrics["jct_median"]
