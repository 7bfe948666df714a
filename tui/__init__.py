"""moot: a terminal console for running structured LLM debates live."""

__version__ = "0.2.0"
