"""The progress bar of hdeeprm-launch, -sweep and -evaluate: drawn on a terminal only."""
import io
import sys

from hdeeprm.cli import launch as launch_cli
from hdeeprm.run.lifecycle import progress_bar
from tests.test_layout_defects import QUICKSTART


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_run_with_standard_error_redirected_writes_no_bar(tmp_path, capfd):
    assert launch_cli.main([str(QUICKSTART), "-o", str(tmp_path / "out")]) == 0   # without -q
    err = capfd.readouterr().err
    assert "\r" not in err and "job/s" not in err and "hdeeprm:" not in err


def test_the_bar_is_drawn_on_a_terminal(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = progress_bar(10, "job", "hdeeprm")
    bar.update(10)
    bar.close()
    assert "hdeeprm:" in terminal.getvalue() and "/10 " in terminal.getvalue()
