"""Build hook: compile the translation catalogs (app/locale/*/LC_MESSAGES/*.po) into .mo files.

Everything else about the package is in pyproject.toml. The compiler is the app's own
stdlib-only module, loaded by path so that building needs nothing beyond setuptools. An editable
install (`pip install -e .`) needs no compiled files: the app compiles a .po in memory when its
.mo is missing (app/core/i18n/__init__.py).
"""

import importlib.util
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _catalog_module():
    spec = importlib.util.spec_from_file_location("_cowork_catalog", ROOT / "app" / "core" / "i18n" / "catalog.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class BuildPyWithCatalogs(build_py):
    """build_py, plus a .mo beside each .po in the built package (wheels and sdist installs)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # the source tree is the package: the app compiles catalogs itself
        locale = ROOT / "app" / "locale"
        _catalog_module().compile_tree(locale, Path(self.build_lib) / "app" / "locale")


setup(cmdclass={"build_py": BuildPyWithCatalogs})
