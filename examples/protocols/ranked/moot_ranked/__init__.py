"""A ranked-vote protocol for moot, installed through the ``moot.protocols`` entry point."""
