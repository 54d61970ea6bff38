"""Packaging the app with the library (the metadata is in pyproject.toml).

`pip install .` installs the `matching` package and, inside it as `matching/_app/`, the app and
what it reads: app.py, ui/, .streamlit/config.toml, pretrained/ and samples/. The checkout keeps
its layout (app.py at the root beside ui/ and pretrained/); `matching.paths.app_dir()` finds
either. This file exists because the app's folder is mapped from the repository's root, which
pyproject.toml alone cannot list beside the discovered packages.
"""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

APP = "matching._app"  # matching.paths.INSTALLED_APP


class BuildPy(build_py):
    """build_py that leaves this file out of the app's folder (mapped from the root, where it lies)."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if not (package == APP and m[1] == "setup")]


setup(
    packages=[*find_packages(include=["matching", "matching.*"]), APP,
              *(f"{APP}.{package}" for package in find_packages(include=["ui", "ui.*"]))],
    package_dir={APP: "."},
    package_data={
        "matching": ["evaluation/papers/*.json"],
        APP: [".streamlit/config.toml", "pretrained/defaults.json", "pretrained/paper-tables.*", "pretrained/*/*",
              "samples/*"],
        f"{APP}.ui": ["screens/*.py", "static/*"],  # the pages are scripts streamlit runs, not a package; the icon
    },
    cmdclass={"build_py": BuildPy},
)
