"""Platforms: type libraries, the HDeepRM platform JSON loader and the SimGrid XML exporter.

Typical use::

    from hdeeprm.platform import load_platform, write_simgrid_platform
    hierarchy = load_platform("platforms/gaia.json")
    write_simgrid_platform(hierarchy, "out/platform.xml")

The other modules:

* :mod:`~hdeeprm.platform.gpu_platform`: GPU clusters from either kind of platform file, and the GPU table of
  ``hdeeprm-platform summary``.
* :mod:`~hdeeprm.platform.gpu_types`: The GPU type library: GPU models from vendor datasheets, kept apart from
  the processor library.
* :mod:`~hdeeprm.platform.hosts`: Host descriptions the simulators run on (one Batsim/SimGrid host each).
* :mod:`~hdeeprm.platform.library`: Type libraries: the processor, node and network models platforms are built
  from.
* :mod:`~hdeeprm.platform.openb`: GPU clusters: the openb node list reader and the :class:`GpuCluster` it
  builds.
* :mod:`~hdeeprm.platform.simgrid_export`: Write a resource hierarchy as a SimGrid platform XML for Batsim
  4.2.1 / SimGrid 3.32.
* :mod:`~hdeeprm.platform.simgrid_reader`: Reader of SimGrid XML platforms (the ``-p`` input of Batsim) into
  :class:`HostSpec` lists.
"""
from hdeeprm.platform.library import DEFAULT_LIBRARY_FILES, NetworkType, TypeLibrary, load_library
from hdeeprm.platform.loader import load_platform, platform_from_dict
from hdeeprm.platform.simgrid_export import simgrid_platform_tree, write_simgrid_platform

__all__ = ["DEFAULT_LIBRARY_FILES", "NetworkType", "TypeLibrary", "load_library", "load_platform",
           "platform_from_dict", "simgrid_platform_tree", "write_simgrid_platform"]
