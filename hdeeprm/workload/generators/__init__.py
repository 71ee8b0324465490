"""Synthetic workload generators (SWF output), e.g. the Lublin-Feitelson model."""
