"""How the Python code holds its compiled twins (Cython extensions; ``docs/engine.rst``, "Compiled paths").

Each extension is optional: a module imports its class, or None when the install did not build it, and
uses the pure-Python path then. Two rules are written here once for all of them: how an install names the
path it runs (``run.json`` and the benchmarks print it), and that an object holding a compiled helper
remakes its own after ``copy.deepcopy`` or pickle (a compiled object keeps views of its owner's arrays or
lists, which a copy must not share, and cannot be copied itself).
"""
from __future__ import annotations

#: What a path name says when the extension was not built.
NOT_BUILT = "pure Python (kernel not built)"


def path_name(compiled: object, extension: str) -> str:
    """``"compiled (EXTENSION)"`` when ``compiled`` (the class the extension gives) is there, else :data:`NOT_BUILT`.

    Args:
        compiled: The imported class, or None when the extension was not built.
        extension: The extension's module name, e.g. ``"rows_kernel"``.
    """
    return f"compiled ({extension})" if compiled is not None else NOT_BUILT


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
