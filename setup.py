"""Packaging of HDeepRM (setuptools)."""
import logging
import os
import runpy
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
#: The compiled paths (optional: without Cython or a C compiler the install goes on (OptionalBuildExt), and
#: hdeeprm uses its pure-Python paths, same results): the small-job contention bookkeeping
#: (hdeeprm/decision/contention_kernel.pyx), the streamed output rows (hdeeprm/outputs/rows_kernel.pyx) and the
#: engine's host pstates on small platforms (hdeeprm/simulation/pstates_kernel.pyx), and the queue statistics of a
#: decision (hdeeprm/decision/queue_kernel.pyx: observation percentiles, action-mask heads). Listed once, in
#: hdeeprm/compiled.py's COMPILED_PATHS (read here without importing the package; run.json names the same list).
KERNELS = [Extension(path.module, [path.source])
           for path in runpy.run_path(str(HERE / "hdeeprm" / "compiled.py"))["COMPILED_PATHS"]]
try:
    from Cython.Build import cythonize
except ImportError:
    EXTENSIONS = []
else:
    EXTENSIONS = cythonize(KERNELS, quiet=True)


class OptionalBuildExt(build_ext):
    """build_ext that warns and goes on when the kernel does not compile, and keeps an editable install's kernels.

    setuptools' ``optional`` flag does not cover every failure of an editable install (a compiler that
    exits non-zero stops it), so each extension's build is tried here, and one that fails is left out.

    An editable install (``pip install -e .``, again for another extra) builds in fresh temporary folders,
    where setuptools' own up-to-date test (the module newer than its sources) never finds the module, and
    with a freshly installed Cython, whose bundled ``libc``/``cpython`` .pxd files are newer than the .c files,
    so cythonize writes the .c files again: every kernel was compiled again. Here a kernel whose compiled module
    in the source tree (the one the editable install uses, named for this interpreter and platform) is newer
    than its .pyx (the .c is generated from it) is taken as built, and not copied back over itself.
    ``build_ext --force``, or deleting the module, compiles it again.
    """

    _reused: frozenset = frozenset()

    def build_extension(self, ext):
        """Build one extension, unless an editable install's in-tree module of it is up to date (then copy it)."""
        inplace = self._up_to_date_in_tree(ext)
        if inplace is None:
            super().build_extension(ext)
            return
        self.announce(f"{ext.name}: {inplace} is newer than its .pyx, not compiled again", level=logging.INFO)
        built = self.get_ext_fullpath(ext.name)   # in the build folder: what the install collects
        self.mkpath(os.path.dirname(built))
        self.copy_file(inplace, built)
        self._reused |= {ext.name}

    def _up_to_date_in_tree(self, ext):
        """The in-tree module of ``ext`` when this is an editable install and it is newer than its sources."""
        if self.force or not getattr(self, "editable_mode", False):
            return None
        name = self.get_ext_fullname(ext.name)
        package = self.get_finalized_command("build_py").get_package_dir(name.rpartition(".")[0])
        inplace = os.path.join(package, os.path.basename(self.get_ext_filename(name)))
        sources = [*(s[:-2] + ".pyx" if s.endswith(".c") else s for s in ext.sources), *ext.depends]
        if not os.path.isfile(inplace) or not all(os.path.isfile(s) for s in sources):
            return None
        return inplace if os.path.getmtime(inplace) > max(os.path.getmtime(s) for s in sources) else None

    def copy_extensions_to_source(self):
        """Copy the compiled modules into the source tree (editable install), but not those kept there."""
        every = self.extensions
        self.extensions = [ext for ext in every if ext.name not in self._reused]
        try:
            super().copy_extensions_to_source()
        finally:
            self.extensions = every

    def build_extensions(self):
        """Build each extension; one that fails is reported (a warning) and dropped from the install.

        Floating-point contraction is turned off (GCC and Clang may fuse ``a * b + c`` into one FMA where the
        processor has it, e.g. on ARM64, which rounds once instead of twice): the kernels must compute what
        Python computes, to the bit.
        """
        if self.compiler.compiler_type != "msvc":   # MSVC does not contract unless told to (/fp:contract)
            for ext in self.extensions:
                ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
        built = []
        for ext in self.extensions:
            try:
                self.build_extension(ext)
            except Exception as error:   # any failure: the pure-Python path gives the same results
                self.warn(f"{ext.name} not built ({error}); HDeepRM will run its pure-Python path instead")
            else:
                built.append(ext)
        self.extensions = built   # the later steps (copies, the wheel's file list) skip what was not built
#: hdeeprm-serve's dependencies (the "serve" extra; the tests need them too).
SERVE = ["openenv-core>=0.3.0,<0.4", "uvicorn>=0.24", "fastapi>=0.104", "httpx>=0.28.1", "websockets>=15.0.1"]

setup(
    name="hdeeprm",
    version="0.3.0",
    description=("Workload management for heterogeneous clusters: classic policies and deep "
                 "reinforcement learning agents on a Batsim-compatible simulator"),
    long_description=(HERE / "README.rst").read_text(encoding="utf-8") if (HERE / "README.rst").exists() else "",
    long_description_content_type="text/x-rst",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["hdeeprm", "hdeeprm.*"]),
    package_data={"hdeeprm": ["platform/data/*.json", "py.typed"]},   # py.typed: PEP 561, typed package
    ext_modules=EXTENSIONS,
    cmdclass={"build_ext": OptionalBuildExt},
    install_requires=[
        "numpy>=1.24",
        "gymnasium>=1.0",
        # The CPU build 2.13.0 is installed from a local file on the project's machines;
        # an unconstrained "torch" would pull several GB of CUDA wheels.
        "torch==2.13.0",
        "lxml>=4.9",
        "defusedxml>=0.7",
        "procset>=1.0",
        "jsonschema>=4.0",
        "tqdm>=4.60",
        "matplotlib>=3.7",
        # hdeeprm-workload fetch: the public traces on demand, checksums verified (hdeeprm.workload.datasets).
        "pooch>=1.8",
    ],
    extras_require={
        # pybatsim 3.2.1 pins pyzmq<23, which does not build on Python 3.11; it runs fine with
        # a current pyzmq: see README.rst ("Set up and test") for the install line.
        "batsim": ["pyzmq>=25", "sortedcontainers>=2.3,<3", "docopt>=0.6.2,<0.7"],
        "sb3": ["stable-baselines3>=2.3"],
        # hdeeprm-sweep --backend ray (local instance or a cluster).
        "ray": ["ray[default]>=2.9"],
        # hdeeprm-sweep's summary.parquet (without it: summary.csv and summary.png only).
        "parquet": ["pyarrow>=14"],
        # MaskablePPO (action masks of hdeeprm/GpuPlacement-v0 and HDeepRM-JobSlot-v0).
        "sb3-contrib": ["stable-baselines3>=2.3", "sb3-contrib>=2.3"],
        # The documentation (docs/): Sphinx with autodoc and napoleon (both ship with Sphinx).
        "docs": ["sphinx>=7"],
        # hdeeprm-serve: the environments over HTTP/WebSocket (OpenEnv's server and client, uvicorn).
        "serve": SERVE,
        "test": ["pytest>=7", "ruff>=0.6", "hypothesis>=6.100", "pyzmq>=25", "sortedcontainers>=2.3,<3",
                 "docopt>=0.6.2,<0.7", "stable-baselines3>=2.3", "docutils>=0.18", "pyarrow>=14",
                 # the sweep's Ray backend is tested on a local Ray instance (plain ray: no dashboard)
                 "ray>=2.9",
                 # tests/test_docs.py builds docs/ with warnings as errors, as the docs extra does
                 "sphinx>=7", *SERVE,
                 # evalys (Batsim's analysis library) reads our out_jobs.csv in a test; it installs a
                 # top-level ``tests`` package, which is why tests/ is a regular package
                 "evalys>=4.0"],
    },
    entry_points={
        "console_scripts": [
            "hdeeprm-launch=hdeeprm.cli.launch:main",
            "hdeeprm-workload=hdeeprm.cli.workload:main",
            "hdeeprm-platform=hdeeprm.cli.platform:main",
            "hdeeprm-batsim=hdeeprm.cli.batsim:main",
            "hdeeprm-visual=hdeeprm.cli.visual:main",
            "hdeeprm-check=hdeeprm.cli.check:main",
            "hdeeprm-gpu=hdeeprm.cli.gpu:main",
            "hdeeprm-evaluate=hdeeprm.cli.evaluate:main",
            "hdeeprm-sweep=hdeeprm.cli.sweep:main",
            "hdeeprm-serve=hdeeprm.cli.serve:main",
        ],
        "gymnasium.envs": ["__root__=hdeeprm:register_envs"],
    },
)
