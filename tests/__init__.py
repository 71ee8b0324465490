"""HDeepRM's test suite, a regular package.

It must be a regular package (not a namespace one): a regular package named ``tests`` anywhere on
``sys.path`` wins over a namespace package, and evalys (the Batsim ecosystem's analysis library)
installs a top-level ``tests`` package, which then hid ``tests.conftest`` and ``tests.toy``.
"""
