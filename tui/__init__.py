"""moot: a terminal console for running structured LLM debates live."""


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata on first use: importing
    ``importlib.metadata`` is start-up the console's first paint need not pay.

    pyproject.toml's ``version`` is the one place it is written; sessions record this one.
    """
    if name == "__version__":
        from importlib.metadata import version

        found = globals()[name] = version("moot")
        return found
    raise AttributeError(f"module 'tui' has no attribute {name!r}")
