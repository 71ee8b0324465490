"""Sphinx directive ``hdeeprm-public-api``: autodoc entries for every public name of ``hdeeprm``.

The public names are written once, in ``hdeeprm.__all__``; this directive turns each into an
``autoclass``, ``autofunction`` or ``autodata`` entry (``hdeeprm.NAME``), so that the API page
follows the package's exports without a second list.
"""
from __future__ import annotations

import importlib
import inspect

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


def api_entries(package: str = "hdeeprm") -> list[tuple[str, str]]:
    """The autodoc directive of every name of ``package.__all__``, in that order.

    Args:
        package: The package whose ``__all__`` is documented.

    Returns:
        ``(directive, qualified name)`` pairs, e.g. ``("autoclass", "hdeeprm.Options")``;
        ``__version__`` is left out (the page states the version).
    """
    module = importlib.import_module(package)
    entries = []
    for name in module.__all__:
        if name.startswith("__"):
            continue
        obj = getattr(module, name)
        kind = "autoclass" if inspect.isclass(obj) else "autofunction" if callable(obj) else "autodata"
        entries.append((kind, f"{package}.{name}"))
    return entries


class PublicApi(SphinxDirective):
    """``.. hdeeprm-public-api::``: the autodoc entries of :func:`api_entries`."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        """Parse the generated autodoc directives in place."""
        lines = StringList()
        source = self.get_source_info()[0]
        for kind, name in api_entries():
            for line in (f".. {kind}:: {name}", ""):
                lines.append(line, source)
        container = nodes.container()
        nested_parse_with_titles(self.state, lines, container)
        return container.children


def setup(app) -> dict:
    """Register the directive (Sphinx extension entry point)."""
    app.add_directive("hdeeprm-public-api", PublicApi)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
