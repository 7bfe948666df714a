"""The session file and what it proves: append-only records, the hash chain,
signatures and keys, trust, older formats, outcomes, live sessions bound to a
file, fork, replay and ``moot verify``.

Nothing is imported here: importing one module loads only what it needs.
"""
