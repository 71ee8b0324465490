"""Platforms: type libraries, the HDeepRM platform JSON loader and the SimGrid XML exporter.

Typical use::

    from hdeeprm.platform import load_platform, write_simgrid_platform
    hierarchy = load_platform("platforms/gaia.json")
    write_simgrid_platform(hierarchy, "out/platform.xml")
"""
from hdeeprm.platform.library import DEFAULT_LIBRARY_FILES, NetworkType, TypeLibrary, load_library
from hdeeprm.platform.loader import load_platform, platform_from_dict
from hdeeprm.platform.simgrid_export import simgrid_platform_tree, write_simgrid_platform

__all__ = ["DEFAULT_LIBRARY_FILES", "NetworkType", "TypeLibrary", "load_library", "load_platform",
           "platform_from_dict", "simgrid_platform_tree", "write_simgrid_platform"]
