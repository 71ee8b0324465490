"""The out_jobs.csv hdeeprm-launch writes, read by evalys (the Batsim ecosystem's analysis library)."""
import csv
import json
from pathlib import Path

import pytest

from hdeeprm.cli.launch import main

jobset = pytest.importorskip("evalys.jobset", reason="evalys is in the test extra: pip install -e '.[test]'")

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.json"


def test_evalys_reads_out_jobs_csv_and_agrees_with_our_metrics(tmp_path):
    assert main([str(QUICKSTART), "-o", str(tmp_path), "--quiet"]) == 0
    jobs = jobset.JobSet.from_csv(str(tmp_path / "out_jobs.csv"))
    metrics = json.loads((tmp_path / "out_metrics.json").read_text())
    schedule = next(csv.DictReader(open(tmp_path / "out_schedule.csv")))
    df = jobs.df
    assert len(df) == metrics["nb_jobs"] == 500
    assert (df.final_state == "COMPLETED_SUCCESSFULLY").sum() == metrics["nb_completed"]
    # evalys parses allocated_resources (a ProcSet) into proc_alloc: the cores each job asked for
    assert (df.proc_alloc == df.requested_number_of_resources).all()
    assert df.waiting_time.mean() == pytest.approx(metrics["mean_waiting_time"], rel=1e-9)
    assert df.turnaround_time.max() == pytest.approx(metrics["max_turnaround_time"], rel=1e-9)
    assert df.finish_time.max() == pytest.approx(metrics["makespan"], rel=1e-9)
    # utilization = busy core-seconds / (platform cores x (makespan - first submission))
    cores = int(schedule["nb_computing_machines"])
    mean_load = jobs.mean_utilisation(begin_time=df.submission_time.min(), end_time=df.finish_time.max())
    assert mean_load / cores == pytest.approx(metrics["utilization"], rel=1e-9)
