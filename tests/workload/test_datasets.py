"""Datasets on demand (issue 37): the registry, ``hdeeprm-workload fetch`` through a local mirror, resolution.

A local ``http.server`` in a thread serves the shared traces (``SHARED/traces``) as a mirror: ``/ok/FILE`` as it is,
``/corrupt/FILE`` with one byte changed, ``/drop/FILE`` cut off half-way on its first request (an interrupted
download), ``/upstream/...`` the upstream form of the two derived entries (the Philly csv uncompressed, the HPC2N
slice gzip-compressed as its raw log is). Every test fetches into a temporary ``$HDEEPRM_DATA``.
"""
from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import json
import re
import shutil
import socket
import threading
from pathlib import Path

import pytest

from hdeeprm.config.options import load_options
from hdeeprm.errors import OptionsError
from hdeeprm.workload import datasets
from hdeeprm.workload.datasets import DATASETS, DatasetError, dataset_path, fetch
from tests.conftest import ROOT

PHILLY = datasets.dataset("philly:derived")
NASA = datasets.dataset("pwa:NASA-iPSC-1993-3.1-cln")


class _Mirror(http.server.BaseHTTPRequestHandler):
    """GET ``/MODE/FILE`` (see the module docstring); counts the requests per path."""

    traces: Path
    hits: dict[str, int]

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        """Serve one file as its mode says."""
        mode, _, rest = self.path.lstrip("/").partition("/")
        self.hits[self.path] = self.hits.get(self.path, 0) + 1
        data = self._payload(mode, rest)
        if data is None:
            self.send_error(404, "File not found")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if mode == "drop" and self.hits[self.path] == 1:
            self.wfile.write(data[:len(data) // 2])   # the connection closes half-way (HTTP/1.0)
            return
        self.wfile.write(data)

    def _payload(self, mode: str, rest: str) -> bytes | None:
        if mode == "upstream":
            if rest == "philly.csv":
                return gzip.decompress((self.traces / PHILLY.file).read_bytes())
            if rest == "HPC2N-2002-2.2.swf.gz":
                return gzip.compress((self.traces / "HPC2N-2002-first3171.swf").read_bytes() + b"   9 more\n")
            return None
        path = self.traces / rest
        if mode not in ("ok", "corrupt", "drop") or not path.is_file():
            return None
        data = path.read_bytes()
        return data[:100] + bytes([data[100] ^ 1]) + data[101:] if mode == "corrupt" else data

    def log_message(self, *args) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def mirror(shared):
    """``(url, hits)``: the local mirror's root URL and its request counts."""
    handler = type("Mirror", (_Mirror,), {"traces": shared / "traces", "hits": {}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.hits
    server.shutdown()
    server.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty user cache ($HDEEPRM_DATA); no mirror variable, no wait between download attempts."""
    monkeypatch.setenv("HDEEPRM_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("HDEEPRM_DATA_URL", raising=False)
    monkeypatch.setattr("pooch.core.time.sleep", lambda seconds: None)
    return tmp_path / "cache"


@pytest.fixture
def nothing_shared(tmp_path, monkeypatch):
    """No shared folder: $HDEEPRM_SHARED unset and no ../shared next to the checkout."""
    monkeypatch.delenv("HDEEPRM_SHARED", raising=False)
    monkeypatch.setattr(datasets, "SHARED_FALLBACK", tmp_path / "no-shared")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


# --- the registry ---------------------------------------------------------------------------------------------

def test_every_entry_is_the_shared_copy(shared):
    """Each entry's SHA-256 and size are those of the shared copy it names (the file HDeepRM reads)."""
    for entry in DATASETS:
        path = shared / "traces" / entry.file
        assert (_sha(path), path.stat().st_size) == (entry.sha256, entry.size), entry.name


def test_philly_is_the_upstream_csv_gzip_compressed(shared):
    """The derived Philly file is the Pollux artifact's philly.csv compressed: its content has the upstream SHA."""
    content = gzip.decompress((shared / "traces" / PHILLY.file).read_bytes())
    assert hashlib.sha256(content).hexdigest() == PHILLY.upstream_sha256
    assert (PHILLY.recipe, PHILLY.url.rsplit("/", 1)[1]) == ("gzip", "philly.csv")


def test_names_and_sources():
    assert datasets.SOURCES == ("pwa", "rlscheduler", "openb", "philly")
    assert all(datasets.is_dataset_name(d.name) for d in DATASETS)
    assert not any(datasets.is_dataset_name(v) for v in ("trace.swf", "../shared/x.swf", "C:/x.swf", "pwa:a/b", 3))
    with pytest.raises(DatasetError, match=re.escape("unknown dataset 'pwa:KTH-SP2-1996-2.1' (valid: pwa:KTH-SP2-"
                                                     "1996-2.1-cln, ")):
        datasets.dataset("pwa:KTH-SP2-1996-2.1")


def test_the_docs_table_is_the_registry():
    """docs/platforms.rst holds the table registry_table() writes (regenerate it from there when the registry moves)."""
    assert datasets.registry_table() in (ROOT / "docs" / "platforms.rst").read_text()


def test_every_trace_the_examples_and_envs_name_is_registered():
    """The shipped examples and the GPU scenarios name their public traces by registry name, never by a path."""
    from hdeeprm.env.gpu_scenarios import GPU_SCENARIOS

    named = set()
    for path in ROOT.glob("examples/**/*.json"):
        text = path.read_text()
        assert "$HDEEPRM_SHARED" not in text, path
        named |= set(re.findall(r'"((?:pwa|rlscheduler|openb|philly):[^"]+)"', text))
    for name in GPU_SCENARIOS.names():
        scenario = GPU_SCENARIOS[name]
        named |= {p for p in (scenario.platform, scenario.trace) if datasets.is_dataset_name(p)}
    assert named and all(datasets.dataset(name) for name in named)
    assert {"pwa:KTH-SP2-1996-2.1-cln", "pwa:SDSC-SP2-1998-4.2-cln", "philly:derived", "openb:node_list_gpu_node",
            "openb:pod_list_default"} <= named


# --- fetch through the local mirror -----------------------------------------------------------------------------

def test_fetch_all_through_the_mirror_then_nothing_downloads_again(mirror, cache, capsys):
    """``hdeeprm-workload fetch --all --mirror URL``: every file in the cache, checksums verified; a second fetch
    finds them (no request)."""
    from hdeeprm.cli.workload import main

    url, hits = mirror
    assert main(["fetch", "--all", "--mirror", f"{url}/ok"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"pwa:KTH-SP2-1996-2.1-cln: {cache / 'KTH-SP2-1996-2.1-cln.swf.gz'}"
    assert out[-1] == f"{len(DATASETS)} trace(s) in {cache}, checksums verified"
    assert _files(cache) == sorted(d.file for d in DATASETS)
    assert all(_sha(cache / d.file) == d.sha256 for d in DATASETS)
    before = sum(hits.values())
    assert fetch([NASA.name], base_url=f"{url}/ok") == [cache / NASA.file]
    assert sum(hits.values()) == before


def test_the_mirror_variable_is_the_default_base_url(mirror, cache, monkeypatch):
    url, hits = mirror
    monkeypatch.setenv("HDEEPRM_DATA_URL", f"{url}/ok/")
    assert fetch([NASA.name]) == [cache / NASA.file]
    assert hits[f"/ok/{NASA.file}"] >= 1


def test_a_checksum_mismatch_is_refused_and_nothing_kept(mirror, cache, capsys):
    from hdeeprm.cli.workload import main

    url, hits = mirror
    expected = bytearray((datasets.shared_dir() / "traces" / NASA.file).read_bytes())
    expected[100] ^= 1
    got = hashlib.sha256(expected).hexdigest()
    assert main(["fetch", NASA.name, "--mirror", f"{url}/corrupt", "--retries", "0"]) == 2
    assert capsys.readouterr().err == (
        f"hdeeprm-workload: error: {NASA.name}: the file downloaded from {url}/corrupt/{NASA.file} has SHA-256 "
        f"{got}, not the registry's {NASA.sha256}: refused, nothing kept (a corrupted download, or a mirror serving "
        "another file)\n")
    assert _files(cache) == []
    hits.clear()
    with pytest.raises(DatasetError, match="refused, nothing kept"):
        fetch([NASA.name], base_url=f"{url}/corrupt", retries=2)   # retried, then refused
    assert hits == {f"/corrupt/{NASA.file}": 3} and _files(cache) == []


def test_an_interrupted_download_is_retried(mirror, cache):
    url, hits = mirror
    assert fetch([PHILLY.name], base_url=f"{url}/drop") == [cache / PHILLY.file]
    assert hits[f"/drop/{PHILLY.file}"] == 2
    assert _sha(cache / PHILLY.file) == PHILLY.sha256 and _files(cache) == [PHILLY.file]


def test_offline_says_the_url_and_where_to_put_the_file(cache):
    with socket.socket() as probe:   # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DatasetError) as info:
        fetch([PHILLY.name], base_url=f"http://127.0.0.1:{port}", retries=0)
    assert str(info.value) == (
        f"{PHILLY.name}: cannot download http://127.0.0.1:{port}/{PHILLY.file} (no connection): put that file at "
        f"{cache / PHILLY.file}, or set $HDEEPRM_DATA_URL to a mirror")


def test_a_missing_file_on_the_mirror_is_one_line(mirror, cache):
    url, _ = mirror
    with pytest.raises(DatasetError, match=re.escape(f"cannot download {url}/nothing/{NASA.file} (HTTP 404 File not "
                                                     f"found): put that file at {cache / NASA.file}")):
        fetch([NASA.name], base_url=f"{url}/nothing", retries=0)


@pytest.mark.slow
@pytest.mark.parametrize("name, upstream", [("philly:derived", "philly.csv"),
                                            ("pwa:HPC2N-2002-first3171", "HPC2N-2002-2.2.swf.gz")])
def test_derived_entries_are_built_from_their_upstream_file(mirror, cache, monkeypatch, name, upstream):
    """Without a mirror the upstream file is downloaded into CACHE/upstream and the recipe applied, then verified
    (the Philly content against the upstream SHA; the HPC2N slice, the first 3,194 lines, against its own)."""
    url, _ = mirror
    entry = datasets.dataset(name)
    monkeypatch.setitem(datasets._BY_NAME, name, dataclasses.replace(entry, url=f"{url}/upstream/{upstream}"))
    assert fetch([name], base_url="") == [cache / entry.file]
    assert datasets.verified(cache / entry.file, entry)
    assert _files(cache) == sorted([entry.file, f"upstream/{upstream}"])
    if entry.recipe == "head:3194":
        assert _sha(cache / entry.file) == entry.sha256


# --- resolution: the cache, then the shared folder, then one line ------------------------------------------------

def test_a_name_resolves_to_the_cache_then_the_shared_folder_then_fails(shared, cache, monkeypatch, nothing_shared):
    cached = cache / NASA.file
    with pytest.raises(DatasetError) as info:
        dataset_path(NASA.name)
    assert str(info.value) == (
        f"dataset {NASA.name} is not on this machine: run 'hdeeprm-workload fetch {NASA.name}' (downloads "
        f"{NASA.url}), or put {NASA.file} at {cached}")
    monkeypatch.setenv("HDEEPRM_SHARED", str(shared))
    assert dataset_path(NASA.name) == shared / "traces" / NASA.file
    cached.parent.mkdir(parents=True)
    shutil.copy(shared / "traces" / NASA.file, cached)
    assert dataset_path(NASA.name) == cached


def test_the_derived_entries_missing_say_how_they_are_made(cache, nothing_shared):
    with pytest.raises(DatasetError, match=re.escape(
            "run 'hdeeprm-workload fetch pwa:HPC2N-2002-first3171' (downloads https://www.cs.huji.ac.il/labs/parallel/"
            "workload/l_hpc2n/HPC2N-2002-2.2.swf.gz and derives it (its first 3,194 lines)), or put "
            f"HPC2N-2002-first3171.swf at {cache / 'HPC2N-2002-first3171.swf'}")):
        dataset_path("pwa:HPC2N-2002-first3171")


def test_the_shared_fallback_stands_for_an_unset_variable(shared, monkeypatch):
    monkeypatch.delenv("HDEEPRM_SHARED")
    monkeypatch.setattr(datasets, "SHARED_FALLBACK", shared)
    assert datasets.resolve_path("$HDEEPRM_SHARED/traces/lublin_256.swf") == str(shared / "traces" / "lublin_256.swf")
    assert datasets.resolve_path("${HDEEPRM_SHARED}/traces/x.swf", "/") == str(shared / "traces" / "x.swf")


@pytest.mark.slow
def test_options_name_a_trace_by_registry_name(shared, cache, tmp_path, nothing_shared):
    """An options file's registry names resolve through the cache; missing, the error names the field and the
    file; a $HDEEPRM_SHARED path without the variable or the fallback suggests the registry name."""
    options = tmp_path / "o.json"
    options.write_text(json.dumps({"workload_file_path": NASA.name, "platform_file_path": "openb:node_list_gpu_node"}))
    with pytest.raises(OptionsError) as info:
        load_options(options)
    assert str(info.value) == (f"workload_file_path: dataset {NASA.name} is not on this machine: run 'hdeeprm-"
                               f"workload fetch {NASA.name}' (downloads {NASA.url}), or put {NASA.file} at "
                               f"{cache / NASA.file} ({options})")
    for name in (NASA.name, "openb:node_list_gpu_node"):
        entry = datasets.dataset(name)
        (cache / entry.file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared / "traces" / entry.file, cache / entry.file)
    loaded = load_options(options)
    assert (loaded.workload_file_path, loaded.platform_file_path) == (
        str(cache / NASA.file), str(cache / "gpu" / "openb_node_list_gpu_node.csv"))
    options.write_text(json.dumps({"workload_file_path": f"$HDEEPRM_SHARED/traces/{NASA.file}"}))
    with pytest.raises(OptionsError, match=re.escape(
            "workload_file_path uses $HDEEPRM_SHARED, which is not set: export HDEEPRM_SHARED (e.g. the folder holding "
            f"the traces) or write the path itself, or name the dataset '{NASA.name}' (hdeeprm-workload fetch "
            f"{NASA.name}) ({options})")):
        load_options(options)


@pytest.mark.slow
def test_a_gpu_env_runs_from_the_cache_without_the_shared_folder(shared, cache, nothing_shared):
    """``gymnasium.make`` of the GPU environments with $HDEEPRM_SHARED unset and only the cache: their default
    scenarios and a registry-named workload read the cached Philly file; without it, make() says how to fetch it."""
    import gymnasium

    with pytest.raises(DatasetError, match=re.escape("dataset philly:derived is not on this machine: run "
                                                     "'hdeeprm-workload fetch philly:derived'")):
        gymnasium.make("hdeeprm/GpuPlacement-v0")
    (cache / "gpu").mkdir(parents=True)
    shutil.copy(shared / "traces" / PHILLY.file, cache / PHILLY.file)
    for env_id, kwargs in (("hdeeprm/GpuPlacement-v0", {"scenario": "hard-philly"}),
                           ("hdeeprm/GpuJobSlot-v0", {}),
                           ("hdeeprm/GpuPlacement-v0", {"platform": str(ROOT / "platforms" / "dgx_a100.json"),
                                                        "workload": "philly:derived", "nb_jobs": 20})):
        env = gymnasium.make(env_id, **kwargs)
        obs, info = env.reset(seed=3)
        for _ in range(5):
            obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].nonzero()[0][0]))
            if terminated or truncated:
                break
        env.close()
