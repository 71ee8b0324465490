"""How the Python code holds its compiled twins (Cython extensions; ``docs/engine.rst``, "Compiled paths").

Each extension is optional: a module imports its class, or None when the install did not build it, and
uses the pure-Python path then. The extensions are listed once, in :data:`COMPILED_PATHS`: ``setup.py``
builds that list (it reads this file without importing the package, so this module imports nothing),
``run.json`` names the path each one ran (:func:`compiled_paths`), and a test checks that
``docs/engine.rst`` names them all. Two rules are written here once for all of them: how an install names the
path it runs (``run.json`` and the benchmarks print it), and that an object holding a compiled helper
remakes its own after ``copy.deepcopy`` or pickle (a compiled object keeps views of its owner's arrays or
lists, which a copy must not share, and cannot be copied itself).
"""
from __future__ import annotations

from typing import NamedTuple


class CompiledPath(NamedTuple):
    """One compiled extension and the Python modules that use it.

    Attributes:
        key: Its key in ``run.json`` (what it computes), e.g. ``"contention_bookkeeping"``.
        module: The extension's module, e.g. ``"hdeeprm.decision.contention_kernel"``.
        users: ``(module, attribute)`` of each place that imports its class (None there when it was not
            built); the path is compiled when every one holds it.
    """

    key: str
    module: str
    users: tuple[tuple[str, str], ...]

    @property
    def extension(self) -> str:
        """The extension's own name, e.g. ``"contention_kernel"``."""
        return self.module.rsplit(".", 1)[1]

    @property
    def source(self) -> str:
        """Its Cython source, relative to the repository root, e.g. ``"hdeeprm/decision/contention_kernel.pyx"``."""
        return self.module.replace(".", "/") + ".pyx"


#: Every compiled extension, once: ``setup.py`` builds these, ``run.json`` names the path of each.
COMPILED_PATHS: tuple[CompiledPath, ...] = (
    CompiledPath("contention_bookkeeping", "hdeeprm.decision.contention_kernel",
                 (("hdeeprm.decision.contention", "SmallJobKernel"),)),
    CompiledPath("output_rows", "hdeeprm.outputs.rows_kernel",
                 (("hdeeprm.outputs.stream", "StreamRows"),)),
    CompiledPath("host_pstates", "hdeeprm.simulation.pstates_kernel", (("hdeeprm.simulation.pstates", "ListPstates"),)),
    CompiledPath("queue_statistics", "hdeeprm.decision.queue_kernel",
                 (("hdeeprm.decision.observation", "QueueStats"), ("hdeeprm.decision.orderings", "QueueArgmin"))),
)

#: What a path name says when the extension was not built.
NOT_BUILT = "pure Python (kernel not built)"


def path_name(compiled: object, extension: str) -> str:
    """``"compiled (EXTENSION)"`` when ``compiled`` (the class the extension gives) is there, else :data:`NOT_BUILT`.

    Args:
        compiled: The imported class, or None when the extension was not built.
        extension: The extension's module name, e.g. ``"rows_kernel"``.
    """
    return f"compiled ({extension})" if compiled is not None else NOT_BUILT


def compiled_paths() -> dict[str, str]:
    """The path each compiled extension of :data:`COMPILED_PATHS` runs in this process (what ``run.json`` names).

    Returns:
        ``{key: "compiled (EXTENSION)" or NOT_BUILT}``, in the order of :data:`COMPILED_PATHS`.
    """
    import importlib

    return {path.key: path_name(True if all(getattr(importlib.import_module(module), name, None) is not None
                                            for module, name in path.users) else None, path.extension)
            for path in COMPILED_PATHS}


class RemadeOnCopy:
    """Mixin: the compiled helper in attribute :attr:`_COMPILED` is left out of copies and pickles and remade.

    A subclass names the attribute (``_COMPILED``) and builds the helper in ``_compile()`` (None when the
    extension was not built or does not apply), in ``__init__`` as after a copy.
    """

    _COMPILED = "_kernel"

    def __getstate__(self) -> dict:
        """For copy.deepcopy and pickle: everything but the compiled helper."""
        state = self.__dict__.copy()
        state[self._COMPILED] = None
        return state

    def __setstate__(self, state: dict) -> None:
        """After copy.deepcopy or pickle: the compiled helper again, on the copy's own data."""
        self.__dict__.update(state)
        setattr(self, self._COMPILED, self._compile())
