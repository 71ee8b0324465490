"""Paths of the shared SWF traces used by the workload tests (read in place, never copied)."""
import pytest

from tests.conftest import ROOT, TRACES

KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
SDSC = TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"
HPC2N = TRACES / "HPC2N-2002-first3171.swf"
NASA = TRACES / "NASA-iPSC-1993-3.1-cln.swf.gz"
LUBLIN = TRACES / "lublin_256.swf"
#: The generated trace the project ships.
SHIPPED = ROOT / "workloads" / "lublin_500_100.swf"

#: Marks a test that reads the shared traces: skipped cleanly when they are absent.
needs_traces = pytest.mark.skipif(not TRACES.is_dir(), reason=f"no shared traces at {TRACES}")
