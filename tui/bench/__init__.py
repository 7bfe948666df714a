"""``moot bench``: accuracy at equal compute, single answer vs vote vs debate.

Items come from a task that can check them (:mod:`tui.bench.tasks`); every arm
plays through the engine with open votes (:mod:`tui.bench.arms`), the debate
arm into one session file per item that ``moot verify`` re-checks; the figures
(:mod:`tui.bench.report`) are recomputed from the per-item lines kept in ``--out``
(:mod:`tui.bench.store`), so an interrupted run picks up where it stopped.
"""
