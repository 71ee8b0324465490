"""Sphinx configuration of HDeepRM's documentation (``sphinx-build -W -b html docs OUTDIR``).

The pages are reStructuredText in this folder; ``api.rst`` documents the public package
``hdeeprm`` (every name of ``hdeeprm.__all__``, through the ``hdeeprm-public-api`` directive of
``_ext/public_api.py``) with autodoc, reading Google-style docstrings with napoleon.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))      # the checkout's hdeeprm, not another installed copy
sys.path.insert(0, str(HERE / "_ext"))

project = "HDeepRM"
author = "HDeepRM contributors"
copyright = "HDeepRM contributors, MIT licence"
release = version = "0.3.0"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "public_api"]
exclude_patterns = ["_build", "_ext"]
root_doc = "index"
language = "en"

# Google docstrings; an "Attributes:" section becomes :ivar: fields, so that a dataclass's fields are not
# described twice (once by napoleon, once by autodoc).
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}

html_theme = "alabaster"
html_title = "HDeepRM"
