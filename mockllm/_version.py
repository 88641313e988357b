"""The version, written once: pyproject.toml reads it from here too."""

__version__ = "0.2.0"
