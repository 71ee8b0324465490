"""The worker pool of ``hdeeprm-evaluate -j`` and ``hdeeprm-sweep -j`` (:mod:`hdeeprm.run.pool`)."""
from __future__ import annotations

import sys

import pytest

from hdeeprm.run.pool import worker_map, worker_pool


@pytest.mark.slow
def test_an_interrupt_lets_the_summary_imports_finish(tmp_path, monkeypatch):
    """Ctrl-C while the parent imports the summary's modules in the background: the import ends before the
    interrupt goes on, so the interpreter's exit does not cut it (half-made objects print errors at exit)."""
    (tmp_path / "slow_summary_module.py").write_text("import time\ntime.sleep(0.5)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_summary_module", raising=False)
    with pytest.raises(KeyboardInterrupt):
        with worker_pool(1, preload=["slow_summary_module"]):
            raise KeyboardInterrupt
    assert sys.modules["slow_summary_module"].DONE


def test_results_come_in_task_order():
    with worker_map(abs, [-3, 2, -1], jobs=8) as results:
        assert list(results) == [3, 2, 1]
