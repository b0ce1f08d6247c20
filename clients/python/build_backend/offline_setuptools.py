"""The package's PEP 517 build backend: setuptools' own (setuptools.build_meta), found where pip's
build isolation hides it, so that `pip install ./clients/python` needs no download.

Why: pip builds a project in an isolated environment holding only the project's build requirements,
which it installs from an index; offline, or with --no-index, a requirement of setuptools cannot be
met, even on a machine that has it (Debian's python3-setuptools), since the isolated environment drops
the interpreter's site-packages from sys.path. So the project requires nothing (pyproject.toml:
requires = []) and this backend, imported from the source tree (backend-path), looks for setuptools
and wheel: first where the interpreter looks, then in the base interpreter's own site-packages (on
Debian /usr/lib/python3/dist-packages), added at the end of sys.path for this build only. Where they
are in neither place (a bare interpreter with an index at hand), the requirement hooks ask pip for them
as any setuptools project would, and pip installs them before the build hooks run.

The build itself runs in a scratch copy of the project, so that setuptools' build/ and *.egg-info
never land in the source tree (which may be read-only, or shared by builds running at once)."""

import importlib.util
import os
import shutil
import site
import sys
import tempfile
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(HERE)
# What the scratch copy leaves out: earlier builds' leftovers and caches, which setuptools would
# otherwise pick up or trip over.
LEFT_OUT = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".mypy_cache")


def _findable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _add_base_site_packages() -> None:
    """Make the base interpreter's site-packages importable, last on sys.path (pip's isolation removed
    them; a venv's base is the system interpreter)."""
    for directory in site.getsitepackages([sys.base_prefix]):
        if os.path.isdir(directory) and directory not in sys.path:
            sys.path.append(directory)


def _missing() -> List[str]:
    """The build requirements neither sys.path nor the base interpreter has: for pip to install."""
    if not (_findable("setuptools") and _findable("wheel")):
        _add_base_site_packages()
    wanted = {"setuptools": "setuptools>=61", "wheel": "wheel"}
    return [requirement for module, requirement in wanted.items() if not _findable(module)]


def _build_meta() -> Any:
    _missing()
    import setuptools.build_meta
    return setuptools.build_meta


@contextmanager
def _in_scratch_copy() -> Iterator[None]:
    """Run a hook in a temporary copy of the project, then come back and remove it."""
    scratch = tempfile.mkdtemp(prefix="redis-ratelimit-build-")
    copy = os.path.join(scratch, "project")
    cwd = os.getcwd()
    try:
        shutil.copytree(PROJECT, copy, ignore=LEFT_OUT)
        os.chdir(copy)
        yield
    finally:
        os.chdir(cwd)
        shutil.rmtree(scratch, ignore_errors=True)


Settings = Optional[Dict[str, Any]]


def get_requires_for_build_wheel(config_settings: Settings = None) -> List[str]:
    return _missing()


def get_requires_for_build_sdist(config_settings: Settings = None) -> List[str]:
    return [requirement for requirement in _missing() if requirement.startswith("setuptools")]


def get_requires_for_build_editable(config_settings: Settings = None) -> List[str]:
    return _missing()


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Settings = None) -> str:
    with _in_scratch_copy():
        return str(_build_meta().prepare_metadata_for_build_wheel(metadata_directory, config_settings))


def build_wheel(wheel_directory: str, config_settings: Settings = None,
                metadata_directory: Optional[str] = None) -> str:
    with _in_scratch_copy():
        return str(_build_meta().build_wheel(wheel_directory, config_settings, metadata_directory))


def build_sdist(sdist_directory: str, config_settings: Settings = None) -> str:
    with _in_scratch_copy():
        return str(_build_meta().build_sdist(sdist_directory, config_settings))


# An editable install points at the source tree itself, so it is built there (pip install -e).

def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: Settings = None) -> str:
    return str(_build_meta().prepare_metadata_for_build_editable(metadata_directory, config_settings))


def build_editable(wheel_directory: str, config_settings: Settings = None,
                   metadata_directory: Optional[str] = None) -> str:
    return str(_build_meta().build_editable(wheel_directory, config_settings, metadata_directory))
