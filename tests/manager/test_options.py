"""The options file: the original's schema, legacy policy_pair, clear errors."""
import json

import pytest

from hdeeprm.errors import OptionsError
from hdeeprm.config.options import load_options, parse_options
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


def test_unknown_key_is_rejected_with_a_suggestion(tmp_path):
    path = tmp_path / "o.json"
    path.write_text(json.dumps({"seed": 1, "pybatsim": {"env": {"objectve": "makespan"}}}))
    with pytest.raises(OptionsError) as err:
        load_options(path)
    assert str(err.value) == (f"unknown key 'objectve' (did you mean 'objective'?) in pybatsim.env; valid keys: "
                              f"objective, actions, observation, queue_sensitivity ({path})")


def test_bad_objective_lists_the_valid_ones():
    with pytest.raises(OptionsError, match="pybatsim.env.objective must be one of avg_job_slowdown, .*got 'makespn'; "
                                           "did you mean 'makespan'"):
        parse_options({"pybatsim": {"env": {"objective": "makespn"}}})


def test_malformed_json_names_the_line(tmp_path):
    path = tmp_path / "o.json"
    path.write_text('{\n "seed": 1,\n}\n')
    with pytest.raises(OptionsError, match=r"malformed JSON: .* \(.*o.json:3\)"):
        load_options(path)


def test_missing_file():
    with pytest.raises(OptionsError, match=r"options file not found \(nope.json\)"):
        load_options("nope.json")
