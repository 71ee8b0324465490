"""Issue 37, item 5: what the install brings (``py.typed``) and what a second install does not redo.

``hdeeprm/py.typed`` (PEP 561) tells type checkers that HDeepRM's annotations are to be read: it must be in
the package as installed, i.e. in what setup.py's build copies (its ``package_data``).
"""
from __future__ import annotations

import subprocess
import sys

from tests.toy import ROOT


def test_py_typed_is_in_the_package_and_in_what_the_build_installs(tmp_path):
    from importlib.resources import files

    assert files("hdeeprm").joinpath("py.typed").is_file()
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)], cwd=ROOT,
                   check=True, capture_output=True)
    assert (tmp_path / "hdeeprm" / "py.typed").is_file()
    assert (tmp_path / "hdeeprm" / "platform" / "data").is_dir()   # the other package data still goes
