"""Running a debate: the phase loop, the turn player, the operator's controls,
prompts, per-slot schemas, budgets, the roster and the ``[result]``.

Nothing is imported here: importing one module loads only what it needs.
"""
