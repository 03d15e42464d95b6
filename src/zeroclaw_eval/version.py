"""This release's version, on its own at the bottom of the layers: pyproject.toml
reads it from here, the package re-exports it as ``zeroclaw_eval.__version__``, and
a run's history row names it without searching the installed metadata."""

__version__ = "0.1.0"
