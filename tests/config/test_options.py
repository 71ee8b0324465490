"""The options file: the original's schema, legacy policy_pair, clear errors."""
import re
import json

import pytest

from hdeeprm.errors import OptionsError
from hdeeprm.config.options import Options, load_options, parse_options
from hdeeprm.decision.actions import VOID, action_index


def test_reference_options_files_load_unchanged(shared):
    ref = shared / "reference" / "hdeeprm-original" / "options_examples"
    legacy = load_options(ref / "gaia-first-high_gflops-legacy.json")
    assert legacy.actions == [action_index("first", "high_gflops")]
    assert legacy.seed == 20091995 and legacy.nb_jobs == 1000 and legacy.nb_resources == 2280
    learning = load_options(ref / "learning.json")
    assert learning.actions == [action_index("shortest", "high_gflops"), action_index("shortest", "high_mem_bw"),
                                action_index("shortest", "low_power"), action_index("first", "high_gflops"),
                                action_index("first", "high_mem_bw")]
    assert learning.objective == "makespan" and learning.observation == "minimal"
    assert learning.platform_file_path.endswith("platform_examples/learning.json")
    assert (learning.gamma, learning.hidden, learning.lr, learning.run) == (0.99, 16, 0.005, "train")


def test_void_goes_last():
    opts = parse_options({"pybatsim": {"env": {"actions": {"selection": [{"first": ["random"]}], "void": True}}}})
    assert opts.actions == [action_index("first", "random"), VOID]


def test_new_orderings_and_strategies_are_options():
    """Pairs beyond the original 37 actions by name, in both keys; the original indices are untouched."""
    opts = parse_options({"pybatsim": {"env": {"actions": {"selection": [{"wfp3": ["high_gflops", "contiguous"]},
                                                                        {"first": ["high_gflops"]}]},
                                               "start_strategy": "easy_backfilling"}}})
    assert opts.actions == [93, 98, 7] and opts.start_strategy == "easy_backfilling"
    opts = parse_options({"pybatsim": {"agent": {"policy_pair": "unicep-low_power"}}})
    assert opts.actions == [action_index("unicep", "low_power")] == [104]
    assert Options().actions == list(range(VOID)) and VOID == 36
    with pytest.raises(OptionsError, match="conservative_backfilling"):
        parse_options({"pybatsim": {"env": {"start_strategy": "conservative"}}})


def test_unknown_key_is_rejected_with_a_suggestion(tmp_path):
    path = tmp_path / "o.json"
    path.write_text(json.dumps({"seed": 1, "pybatsim": {"env": {"objectve": "makespan"}}}))
    with pytest.raises(OptionsError) as err:
        load_options(path)
    assert str(err.value) == (f"unknown key 'objectve' (did you mean 'objective'?) in pybatsim.env; valid keys: "
                              f"objective, actions, observation, queue_sensitivity, start_strategy ({path})")


def test_bad_objective_lists_the_valid_ones():
    with pytest.raises(OptionsError, match=re.escape(
            "pybatsim.env.objective must be one of avg_job_slowdown, avg_job_completion, avg_utilization, makespan, "
            "energy_consumption, edp, got 'makespn'; did you mean 'makespan'? (<options>)")):
        parse_options({"pybatsim": {"env": {"objective": "makespn"}}})


def test_malformed_json_names_the_line(tmp_path):
    path = tmp_path / "o.json"
    path.write_text('{\n "seed": 1,\n}\n')
    with pytest.raises(OptionsError, match=re.escape(
            f"malformed JSON: Expecting property name enclosed in double quotes (column 1) ({path}:3)")):
        load_options(path)


def test_missing_file():
    with pytest.raises(OptionsError, match=r"^options file not found \(nope.json\)$"):
        load_options("nope.json")


def test_example_paths_name_registered_traces_found_in_the_cache_then_the_shared_folder(monkeypatch, tmp_path):
    """The shipped examples name the public traces by registry name (no ../../shared, no $HDEEPRM_SHARED):
    read from the user cache ($HDEEPRM_DATA), else from $HDEEPRM_SHARED/traces (issue 37)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    path = root / "examples" / "learning" / "kth_window.json"
    assert '"workload_file_path": "pwa:KTH-SP2-1996-2.1-cln"' in path.read_text()
    monkeypatch.setenv("HDEEPRM_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("HDEEPRM_SHARED", str(tmp_path / "data"))
    (tmp_path / "data" / "traces").mkdir(parents=True)
    (tmp_path / "data" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz").write_bytes(b"")
    options = load_options(path)
    assert options.workload_file_path == str(tmp_path / "data" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "KTH-SP2-1996-2.1-cln.swf.gz").write_bytes(b"")
    assert load_options(path).workload_file_path == str(tmp_path / "cache" / "KTH-SP2-1996-2.1-cln.swf.gz")
    monkeypatch.setenv("HDEEPRM_DATA", str(tmp_path / "empty"))
    (tmp_path / "data" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz").unlink()
    with pytest.raises(OptionsError, match=re.escape(
            "workload_file_path: dataset pwa:KTH-SP2-1996-2.1-cln is not on this machine: run 'hdeeprm-workload "
            "fetch pwa:KTH-SP2-1996-2.1-cln' (downloads https://www.cs.huji.ac.il/labs/parallel/workload/l_kth_sp2/"
            f"KTH-SP2-1996-2.1-cln.swf.gz), or put KTH-SP2-1996-2.1-cln.swf.gz at {tmp_path / 'empty'}/"
            f"KTH-SP2-1996-2.1-cln.swf.gz ({path})")):
        load_options(path)


def test_every_default_is_written_once():
    """Options' defaults are the registries' and the SWF conversion's (one source)."""
    from hdeeprm.decision.contention import DEFAULT_CONTENTION_MODEL
    from hdeeprm.decision.observation import DEFAULT_OBSERVATION, DEFAULT_QUEUE_SENSITIVITY
    from hdeeprm.decision.reward import DEFAULT_OBJECTIVE
    from hdeeprm.workload import convert

    o = Options()
    assert (o.objective, o.observation, o.queue_sensitivity, o.contention) == (
        DEFAULT_OBJECTIVE, DEFAULT_OBSERVATION, DEFAULT_QUEUE_SENSITIVITY, DEFAULT_CONTENTION_MODEL)
    assert (o.actual_work, o.profile_type, o.default_mem, o.enforce_walltime, tuple(o.mem_bw_choices)) == (
        convert.DEFAULT_ACTUAL_WORK, convert.DEFAULT_PROFILE_TYPE, convert.DEFAULT_MEM,
        convert.DEFAULT_ENFORCE_WALLTIME, convert.DEFAULT_MEM_BW_CHOICES)
    parsed = parse_options({"seed": 7})
    assert parsed.given == {"seed"} and parsed.to_dict() == {**o.to_dict(), "seed": 7, "given": ["seed"]}


def test_start_strategy_defaults_to_head_of_line_and_rejects_unknown_names():
    assert parse_options({}).start_strategy == "head_of_line"
    assert parse_options({"pybatsim": {"env": {"start_strategy": "head_of_line"}}}).given >= {"start_strategy"}
    with pytest.raises(OptionsError, match=r"pybatsim.env.start_strategy must be one of head_of_line"):
        parse_options({"pybatsim": {"env": {"start_strategy": "head_of_lin"}}})
