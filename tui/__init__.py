"""moot: a terminal console for running structured LLM debates live."""

from importlib.metadata import version

# pyproject.toml's `version` is the one place it is written; sessions record this one.
__version__ = version("moot")
