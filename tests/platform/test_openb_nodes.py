import pytest

from hdeeprm.errors import PlatformError
from hdeeprm.platform.openb import read_openb_nodes

HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"


def test_real_gpu_node_list(shared):
    cluster = read_openb_nodes(shared / "traces/gpu/openb_node_list_gpu_node.csv")
    assert (cluster.nb_nodes, cluster.nb_gpus, cluster.skipped) == (1213, 6212, {})
    assert set(cluster.models) == {"V100M16", "V100M32", "P100", "T4", "A10", "G2", "G3"}
    rows = {r["model"]: r for r in cluster.summary()}
    assert (rows["G2"]["nodes"], rows["G2"]["gpus"], rows["T4"]["gpus"]) == (549, 4392, 842)
    assert cluster.max_gpus_per_node == 8 and cluster.cpu_milli.max() == 128000


def test_real_all_node_list_keeps_cpu_only_nodes(shared):
    cluster = read_openb_nodes(shared / "traces/gpu/openb_node_list_all_node.csv")
    assert (cluster.nb_nodes, cluster.nb_gpus, int((cluster.gpu_model < 0).sum())) == (1523, 6212, 310)


@pytest.mark.parametrize("body, message", [
    ("n1,1000,10,2,V100M61\n", "model must be a known gpu type, got 'V100M61'; did you mean 'V100M16'?"),
    ("n1,1000,10,2,\n", "model must be given exactly when gpu > 0, got gpu=2 and model=''"),
    ("n1,1000,-10,2,T4\n", "memory_mib must be an integer in 1..134217728 (MiB of one node), got '-10'"),
    ("n1,1000,10,2\n", "a node row must have 5 fields, got 4"),
    ("n1,1000,10,2,T4\nn1,1000,10,2,T4\n", "sn must be unique, got 'n1' again (first on line 2)"),
])
def test_bad_rows_name_file_and_line(tmp_path, body, message):
    path = tmp_path / "nodes.csv"
    path.write_text(HEADER + body)
    with pytest.raises(PlatformError) as err:
        read_openb_nodes(path)
    line = 3 if "unique" in message else 2
    assert str(err.value).startswith(message) and str(err.value).endswith(f"({path}:{line})")


def test_blank_lines_are_counted_and_header_checked(tmp_path):
    path = tmp_path / "nodes.csv"
    path.write_text(HEADER + "n1,1000,10,2,T4\n\nn2,8000,64,0,\n")
    cluster = read_openb_nodes(path)
    assert (cluster.nb_nodes, cluster.skipped, list(cluster.gpu_model)) == (2, {"blank line": 1}, [0, -1])
    path.write_text("name,cpu\n")
    with pytest.raises(PlatformError, match="header must be sn,cpu_milli,memory_mib,gpu,model, got name,cpu"):
        read_openb_nodes(path)
