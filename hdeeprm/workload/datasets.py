"""The public traces on demand: a registry of every trace the docs, examples, environments and benchmarks use.

A trace is named ``SOURCE:NAME`` (:data:`DATASETS`): ``pwa:`` the Parallel Workloads Archive's logs,
``rlscheduler:`` the synthetic trace of RLScheduler's repository, ``openb:`` the node and pod lists of the
Alibaba GPU cluster trace v2023, ``philly:`` the per-job Philly table of the Pollux artifact. Each entry holds
its upstream URL, the SHA-256 of the file HDeepRM reads, its size and a licence or acknowledgement note.

Options files (``"workload_file_path": "pwa:KTH-SP2-1996-2.1-cln"``, ``platform_file_path``,
``gpu_jobs.workload_file_path``), the environments' ``platform``/``workload``/``trace`` arguments, their default
scenarios and the commands' trace arguments take a registry name wherever they take a path
(:func:`resolve_path`). A name resolves, in this order, to

1. the user cache, :func:`cache_dir` (``pooch.os_cache("hdeeprm")``, e.g. ``~/.cache/hdeeprm``; ``$HDEEPRM_DATA``
   moves it), where ``hdeeprm-workload fetch NAME`` puts the file;
2. the shared data folder's ``traces/`` (:func:`shared_dir`: ``$HDEEPRM_SHARED``, else the ``shared`` folder
   next to the checkout);
3. else a one-line :class:`DatasetError` naming the URL, where to put the file and the fetch command.

**No download happens during a run**: a run reads what is on the machine, so it works offline and reads the same
bytes every time; downloading is the explicit step ``hdeeprm-workload fetch`` (:func:`fetch`), which verifies
every file's SHA-256 (a mismatch is refused and the file not kept) and retries an interrupted download
(pooch's ``retry_if_failed``). ``$HDEEPRM_DATA_URL`` (or ``fetch(base_url=...)``) names a **mirror**: a URL
laid out as the shared folder's ``traces/`` (``MIRROR/KTH-SP2-1996-2.1-cln.swf.gz``,
``MIRROR/gpu/philly-derived.csv.gz``), whose files are the cached ones byte for byte.

Two entries are not the upstream file as it is (their ``recipe``): ``philly:derived`` is the upstream
``philly.csv`` gzip-compressed (verified on its decompressed content, whose SHA-256 is the upstream file's) and
``pwa:HPC2N-2002-first3171`` the first 3,194 lines of the raw HPC2N log (its 23 header lines and the next 3,171
lines), verified on the result. :func:`fetch` downloads the upstream file into ``CACHE/upstream/`` and derives the
entry from it; a mirror serves the derived file itself.

Sources: pooch (Uieda et al., "Pooch: A friend to fetch your data files", JOSS 2020); the Parallel Workloads
Archive (Feitelson, Tsafrir and Krakov, "Experience with using the Parallel Workloads Archive", JPDC 2014).
"""
from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import tempfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hdeeprm.errors import InputError
from hdeeprm.registry import suggest

#: Environment variable moving the user cache.
DATA_ENV = "HDEEPRM_DATA"
#: Environment variable naming a mirror (a URL laid out as the shared folder's ``traces/``).
MIRROR_ENV = "HDEEPRM_DATA_URL"
#: Environment variable naming the shared data folder (its ``traces/`` holds the same files).
SHARED_ENV = "HDEEPRM_SHARED"
#: The shared data folder when ``$HDEEPRM_SHARED`` is unset: ``shared`` next to the checkout.
SHARED_FALLBACK = Path(__file__).resolve().parents[3] / "shared"
#: Extra attempts of an interrupted or corrupted download (pooch's ``retry_if_failed``).
DEFAULT_RETRIES = 2
#: Seconds before an unanswered download gives up (requests' connect and read timeout).
DOWNLOAD_TIMEOUT = 30

_PWA = "https://www.cs.huji.ac.il/labs/parallel/workload"
_PWA_NOTE = ("Parallel Workloads Archive: free to use; cite the archive (Feitelson, Tsafrir and Krakov, JPDC "
             "2014) and acknowledge {who}, as the log's header asks")
_OPENB = ("https://raw.githubusercontent.com/alibaba/clusterdata/7a6c496e4f4b6ce6150be8f881cb051bf2abff42/"
          "cluster-trace-gpu-v2023/csv")
_OPENB_NOTE = ("Alibaba Cluster Trace Program (alibaba/clusterdata): for research or study; cite Weng et al., "
               "\"Beware of Fragmentation\", USENIX ATC 2023")


@dataclass(frozen=True)
class Dataset:
    """One registered trace.

    Attributes:
        name: Registry name, ``SOURCE:NAME``.
        file: Path of the file under the cache, the shared folder's ``traces/`` and a mirror.
        url: Upstream URL (for a derived entry: of the file it derives from).
        sha256: SHA-256 of ``file`` as HDeepRM reads it (the shared copy's, hex).
        size: Size of ``file`` in bytes.
        licence: Short licence or use terms (the docs' table).
        note: What to acknowledge or cite.
        description: One line on the contents.
        recipe: How ``file`` derives from the upstream download: ``""`` (it is that file), ``"gzip"``
            (compressed; verified on its content) or ``"head:N"`` (its first N lines, from a gzip log).
        upstream_sha256: SHA-256 of the upstream download when a recipe applies ("" when not known): with
            ``"gzip"`` also the SHA-256 of the decompressed ``file``.
    """

    name: str
    file: str
    url: str
    sha256: str
    size: int
    licence: str
    note: str
    description: str
    recipe: str = ""
    upstream_sha256: str = ""

    @property
    def source(self) -> str:
        """The ``SOURCE`` part of the name (``pwa``, ``rlscheduler``, ``openb``, ``philly``)."""
        return self.name.split(":", 1)[0]


def _pwa(name: str, folder: str, sha256: str, size: int, who: str, description: str) -> Dataset:
    return Dataset(f"pwa:{name}", f"{name}.swf.gz", f"{_PWA}/{folder}/{name}.swf.gz", sha256, size,
                   "PWA: free, acknowledge", _PWA_NOTE.format(who=who), description)


def _openb(name: str, sha256: str, size: int, description: str) -> Dataset:
    return Dataset(f"openb:{name}", f"gpu/openb_{name}.csv", f"{_OPENB}/openb_{name}.csv", sha256, size,
                   "research or study use", _OPENB_NOTE, description)


#: Every registered trace, in the docs' order.
DATASETS: tuple[Dataset, ...] = (
    _pwa("KTH-SP2-1996-2.1-cln", "l_kth_sp2",
         "3e152f201fd2e96808a735bced6ea6eb0bb07fdc447689cafb0750d87b264c0b", 411455, "Lars Malinowsky (KTH)",
         "28,476 jobs, IBM SP2 of 100 nodes, KTH Stockholm, 1996-1997 (EASY backfilling)"),
    _pwa("SDSC-SP2-1998-4.2-cln", "l_sdsc_sp2",
         "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac", 1205570, "Victor Hazlewood (SDSC)",
         "59,715 jobs, IBM SP2 of 128 nodes, SDSC, 1998-2000"),
    _pwa("NASA-iPSC-1993-3.1-cln", "l_nasa_ipsc",
         "5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29", 207976, "Bill Nitzberg (NASA Ames)",
         "18,239 jobs, Intel iPSC/860 of 128 nodes, NASA Ames, 1993 (no wait times)"),
    Dataset("pwa:HPC2N-2002-first3171", "HPC2N-2002-first3171.swf", f"{_PWA}/l_hpc2n/HPC2N-2002-2.2.swf.gz",
            "eaaccb339ef0f313d1b975cf02cc518b7cc012fb0c609ef2af2dbd0291aa74ba", 292761, "PWA: free, acknowledge",
            _PWA_NOTE.format(who="Ake Sandgren (HPC2N)"),
            "the first 3,171 records of the raw HPC2N log, Linux cluster Seth, 240 processors, 2002",
            recipe="head:3194"),
    Dataset("rlscheduler:lublin_256", "lublin_256.swf",
            "https://raw.githubusercontent.com/DIR-LAB/deep-batch-scheduler/c649e852ab3cabbc5ac8e4f46b81b1dd66625831/"
            "data/lublin_256.swf", "a394ab3d81179ebcf645a1cbd593a60b6dff7f11a510e1e6285c45f43310c962", 649089,
            "none stated (synthetic)",
            "RLScheduler's repository (DIR-LAB/deep-batch-scheduler) states no licence: cite Zhang et al., "
            "\"RLScheduler\", SC 2020, and the Lublin-Feitelson model (JPDC 2003)",
            "10,000 synthetic jobs of the Lublin-Feitelson model, 256 nodes (RLScheduler's Lublin-1)"),
    _openb("node_list_gpu_node", "2beca64b4d3dfa342036a34b56a495c6cef9225db836c81f541282cb1df320b5", 42353,
           "1,213 GPU nodes, 6,212 GPUs (V100M16, V100M32, P100, T4, A10, G2, G3)"),
    _openb("node_list_all_node", "5a85c2af79c66a1efff8bbcbda430400aae56d8431370d738480967e1a9c6b15", 52287,
           "1,523 nodes (310 without GPUs)"),
    _openb("pod_list_default", "1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8", 575468,
           "8,152 pods (the ATC'23 default trace)"),
    _openb("pod_list_cpu050", "747f43247bffc2b0bb081d7f61f0705ca8d390dafc0b647e642c92f3baf3ba1e", 525811,
           "pods, a variant with more CPU-only pods"),
    _openb("pod_list_gpushare40", "d83ce79a4eb6987524bedbb0c65e41aed3a36bf6c1b78b86234c3687a07e1d40", 572662,
           "pods, a variant with 40 % GPU-sharing pods"),
    _openb("pod_list_gpuspec10", "2dc7e4cb9480484f08539720b433a9ec9ab5d76b396f3f7557c53a2ff78a7611", 579461,
           "pods, a variant with 10 % of pods constrained to GPU types"),
    _openb("pod_list_multigpu20", "d9ec6f6c74fb980cc0b81239470c6353fceea077ea9abd610003b604c7cc2b01", 271530,
           "pods, a variant with 20 % multi-GPU pods (no times)"),
    Dataset("philly:derived", "gpu/philly-derived.csv.gz",
            "https://raw.githubusercontent.com/petuum/adaptdl/c793c7089bd307462686339d29707925c461f9a9/"
            "simulator/traces/philly.csv", "5319bc7116e49fca3087a5c67ffa1732973f19a58c5ba84bf013c7eedb69a884",
            666925, "Apache-2.0 (adaptdl)",
            "Pollux artifact (petuum/adaptdl, branch osdi21-artifact; Qiao et al., OSDI 2021) derived from "
            "Microsoft's Philly trace: cite Jeon et al., USENIX ATC 2019",
            "82,247 Philly jobs, one row each: submission, duration, GPUs (2017-09 to 2017-12)",
            recipe="gzip", upstream_sha256="ebffb3dd1589bdf4e7bcd74496201c5ded1d557d498ee14f560463f37ec353da"),
)
_BY_NAME = {d.name: d for d in DATASETS}
#: The ``SOURCE`` parts of the names: a string ``SOURCE:...`` with one of them is a registry name.
SOURCES: tuple[str, ...] = tuple(dict.fromkeys(d.source for d in DATASETS))
_NAME = re.compile(rf"^({'|'.join(SOURCES)}):[^/\\]+$")
_VARIABLE = re.compile(r"\$(\w+|\{\w+\})")


class DatasetError(InputError):
    """A registry name is unknown, its file is not on this machine, or fetching it failed (one line)."""


def is_dataset_name(value: object) -> bool:
    """Whether ``value`` is written as a registry name (``SOURCE:NAME`` with a known source, no slash)."""
    return isinstance(value, str) and bool(_NAME.match(value))


def dataset(name: str) -> Dataset:
    """The registry entry ``name``.

    Raises:
        DatasetError: an unknown name (with the closest one and where the list is).
    """
    if name not in _BY_NAME:
        raise DatasetError(f"unknown dataset '{name}' ({suggest(name, list(_BY_NAME))})")
    return _BY_NAME[name]


def cache_dir() -> Path:
    """The user cache: ``$HDEEPRM_DATA`` when set, else ``pooch.os_cache("hdeeprm")`` (e.g. ``~/.cache/hdeeprm``)."""
    if os.environ.get(DATA_ENV):
        return Path(os.path.expanduser(os.environ[DATA_ENV])).resolve()
    import pooch

    return Path(pooch.os_cache("hdeeprm"))


def shared_dir() -> Path:
    """The shared data folder: ``$HDEEPRM_SHARED`` when set, else :data:`SHARED_FALLBACK`."""
    return Path(os.environ.get(SHARED_ENV) or SHARED_FALLBACK)


def mirror_url() -> str:
    """The mirror named by ``$HDEEPRM_DATA_URL`` ("" when unset: :func:`fetch` downloads from upstream)."""
    return os.environ.get(MIRROR_ENV, "")


def dataset_path(name: str) -> Path:
    """Where the file of registry name ``name`` is: the cache, else the shared folder (see the module docstring).

    Raises:
        DatasetError: an unknown name, or the file is in neither place (the message names the URL, where to put
            the file and the command that fetches it).
    """
    entry = dataset(name)
    cached = cache_dir() / entry.file
    for candidate in (cached, shared_dir() / "traces" / entry.file):
        if candidate.is_file():
            return candidate
    how = f"downloads {entry.url}" + (f" and derives it ({_recipe_text(entry)})" if entry.recipe else "")
    raise DatasetError(f"dataset {name} is not on this machine: run 'hdeeprm-workload fetch {name}' ({how}), or put "
                       f"{Path(entry.file).name} at {cached}")


def resolve_name(value: str | os.PathLike) -> str:
    """A registry name's file (:func:`dataset_path`), any other value as it is (a path: opened as given).

    Raises:
        DatasetError: as :func:`dataset_path`.
    """
    return str(dataset_path(value)) if is_dataset_name(value) else str(value)


def resolve_path(value: str | os.PathLike, base: str | os.PathLike | None = None, what: str = "") -> str:
    """An input path as HDeepRM opens it.

    A registry name becomes its file (:func:`dataset_path`); any other path has ``~`` and ``$VARIABLES``
    expanded, then is made absolute against ``base`` (default: the current folder).

    ``$HDEEPRM_SHARED`` unset stands for :data:`SHARED_FALLBACK` when that folder exists.

    Args:
        value: A registry name or a path.
        base: The folder relative paths start from (None: the current folder).
        what: What the value is, for messages (``"workload_file_path"``; default: the path itself).

    Raises:
        DatasetError: a registry name whose file is missing (:func:`dataset_path`), or a path naming an
            environment variable that is not set (``"WHAT uses $X, which is not set: export X ..."``).
    """
    if is_dataset_name(value):
        return str(dataset_path(str(value)))
    text = str(value)
    if not os.environ.get(SHARED_ENV) and SHARED_FALLBACK.is_dir():
        text = re.sub(r"\$(HDEEPRM_SHARED\b|\{HDEEPRM_SHARED\})", lambda _: str(SHARED_FALLBACK), text)
    expanded = os.path.expanduser(os.path.expandvars(text))
    unset = _VARIABLE.search(expanded)
    if unset:
        variable = unset.group(1).strip("{}")
        named = [d.name for d in DATASETS if expanded.endswith("/traces/" + d.file)]
        hint = f", or name the dataset '{named[0]}' (hdeeprm-workload fetch {named[0]})" if named else ""
        raise DatasetError(f"{what or repr(text)} uses ${variable}, which is not set: export {variable} (e.g. the "
                           f"folder holding the traces) or write the path itself{hint}")
    return str(((Path(base) if base is not None else Path.cwd()) / expanded).resolve())


def _recipe_text(entry: Dataset) -> str:
    """The recipe in words."""
    if entry.recipe == "gzip":
        return "gzip-compressed"
    return f"its first {int(entry.recipe.split(':')[1]):,} lines"


def sha256_of(path: str | os.PathLike, gunzip: bool = False) -> str:
    """Hex SHA-256 of a file (of its decompressed content with ``gunzip``)."""
    digest = hashlib.sha256()
    with (gzip.open if gunzip else open)(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: str | os.PathLike, entry: Dataset) -> bool:
    """Whether ``path`` holds ``entry``'s file: its SHA-256, or for a ``gzip`` recipe its decompressed content's."""
    if sha256_of(path) == entry.sha256:
        return True
    try:
        return entry.recipe == "gzip" and sha256_of(path, gunzip=True) == entry.upstream_sha256
    except (OSError, EOFError, zlib.error):   # not gzip, or truncated
        return False


def fetch(names: Iterable[str], *, base_url: str | None = None, retries: int = DEFAULT_RETRIES,
          progress: bool = False) -> list[Path]:
    """Download registry entries into the cache (:func:`cache_dir`), checksums verified.

    A file already in the cache with the right checksum is kept as it is (nothing downloaded).

    Args:
        names: Registry names.
        base_url: A mirror laid out as the shared folder's ``traces/`` (None: ``$HDEEPRM_DATA_URL``; "" or
            unset: each entry's upstream URL).
        retries: Extra attempts of an interrupted or corrupted download.
        progress: Show a progress bar (tqdm) per download.

    Returns:
        The cached files, in the order of ``names``.

    Raises:
        DatasetError: an unknown name; a download that failed (offline, HTTP error: the line names the URL and
            where to put the file); a checksum mismatch (the file is not kept).
    """
    entries = [dataset(name) for name in names]
    base = (mirror_url() if base_url is None else base_url).rstrip("/")
    return [_fetch_one(entry, base, retries, progress) for entry in entries]


def _fetch_one(entry: Dataset, base: str, retries: int, progress: bool) -> Path:
    target = cache_dir() / entry.file
    if base or not entry.recipe:
        url = f"{base}/{entry.file}" if base else entry.url
        return _download(entry, url, entry.file, entry.sha256, retries, progress)
    if target.is_file() and verified(target, entry):
        return target
    upstream = _download(entry, entry.url, f"upstream/{entry.url.rsplit('/', 1)[1]}", entry.upstream_sha256,
                         retries, progress)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(handle)
    try:
        _derive(entry, upstream, Path(tmp))
        if not verified(tmp, entry):
            raise DatasetError(f"{entry.name}: the file derived from {upstream} ({_recipe_text(entry)}) has SHA-256 "
                               f"{sha256_of(tmp)}, not the registry's {entry.sha256}: refused, nothing kept")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return target


def _derive(entry: Dataset, upstream: Path, out: Path) -> None:
    """Apply ``entry.recipe`` to the upstream file, writing ``out``."""
    if entry.recipe == "gzip":
        with open(upstream, "rb") as src, gzip.open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
        return
    lines = int(entry.recipe.split(":")[1])
    with gzip.open(upstream, "rb") as src, open(out, "wb") as dst:
        for _, line in zip(range(lines), src):
            dst.write(line)


def _download(entry: Dataset, url: str, relative: str, sha256: str, retries: int, progress: bool) -> Path:
    """One file into ``CACHE/relative`` through pooch (kept when already there with ``sha256``)."""
    import pooch
    import requests

    where = cache_dir() / relative
    fetcher = pooch.create(path=cache_dir(), base_url="", registry={relative: f"sha256:{sha256}" if sha256 else None},
                           urls={relative: url}, retry_if_failed=retries)
    try:
        return Path(fetcher.fetch(relative, downloader=pooch.HTTPDownloader(progressbar=progress,
                                                                            timeout=DOWNLOAD_TIMEOUT)))
    except ValueError as exc:   # pooch: the checksum of the download is not the registry's
        got = re.search(r"but got (\w+)", str(exc))
        raise DatasetError(f"{entry.name}: the file downloaded from {url} has SHA-256 "
                           f"{got.group(1) if got else 'another'}, not the registry's {sha256}: refused, nothing "
                           "kept (a corrupted download, or a mirror serving another file)") from None
    except requests.exceptions.RequestException as exc:
        then = f" and run 'hdeeprm-workload fetch {entry.name}' again" if relative != entry.file else ""
        raise DatasetError(f"{entry.name}: cannot download {url} ({_reason(exc)}): put that file at {where}{then}, "
                           f"or set ${MIRROR_ENV} to a mirror") from None


def _reason(exc: Exception) -> str:
    """A download failure in a few words."""
    import requests

    if isinstance(exc, requests.exceptions.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code} {exc.response.reason}"
    if isinstance(exc, requests.exceptions.Timeout):
        return f"no answer within {DOWNLOAD_TIMEOUT} s"
    if isinstance(exc, requests.exceptions.ConnectionError):
        return "no connection"
    return type(exc).__name__


def format_listing() -> str:
    """The registry as ``hdeeprm-workload fetch --list`` prints it: name, size, licence, where the file is.

    Returns:
        A text table, one line per entry, then the cache and mirror in use.
    """
    cache, shared = cache_dir(), shared_dir() / "traces"
    rows = [("name", "size", "licence", "on this machine")]
    for d in DATASETS:
        where = next((str(folder / d.file) for folder in (cache, shared) if (folder / d.file).is_file()),
                     "missing: hdeeprm-workload fetch " + d.name)
        rows.append((d.name, f"{d.size / 1e6:.2f} MB", d.licence, where))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths)) + "  " + row[3] for row in rows]
    lines.append(f"cache: {cache} (${DATA_ENV}); mirror: {mirror_url() or 'none, upstream URLs'} (${MIRROR_ENV})")
    return "\n".join(lines)


def registry_table() -> str:
    """The registry as a reStructuredText list table (docs/platforms.rst holds it; a test keeps the two equal).

    Returns:
        The table's text, one entry per row: name, file, source (linked to the URL), licence, SHA-256 prefix.
    """
    rows = ["  * - name", "    - file", "    - source", "    - licence", "    - SHA-256 (first 16)"]
    for d in DATASETS:
        github = re.match(r"https://raw\.githubusercontent\.com/([^/]+/[^/]+)/", d.url)
        where = github.group(1) if github else "PWA"
        source = f"{where}: `{d.url.rsplit('/', 1)[1]} <{d.url}>`__" + (f" ({_recipe_text(d)})" if d.recipe else "")
        rows += [f"  * - ``{d.name}``", f"    - ``{d.file}``", f"    - {source}", f"    - {d.licence}",
                 f"    - ``{d.sha256[:16]}``"]
    return "\n".join([".. list-table::", "  :header-rows: 1", "", *rows]) + "\n"
