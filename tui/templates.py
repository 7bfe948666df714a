"""Commented starting specs for ``moot new``; each validates as written."""

from __future__ import annotations

DEBATE = """# A moot debate spec. Validate with: moot validate {name}
[debate]
title = "Adopt event sourcing for the order service?"
motion = "Move the order service to event sourcing this quarter."
protocol = "debate"          # debate | adversary
max_rounds = 2               # rounds before the debate escalates to the operator
consensus_threshold = 2      # votes one option needs (and no tie) to decide
# phases = ["proposal", "critique", "revision", "consensus"]
# votes = ["release", "revise", "escalate"]
# rotate = false             # rotate the speaking order by one each round
# cross_family = "warn"      # off | warn | require: critics from another model family
# retries = 1                # re-asks after an invalid turn before it is recorded invalid

[[debaters]]
id = "architect"
model = "local"              # "local" (embedded), "scripted", or any LiteLLM model string
role = "Argues for event sourcing: auditability and replay."

[[debaters]]
id = "operator-sre"
model = "local"
role = "Argues against: operational cost and migration risk."

[[debaters]]
id = "pragmatist"
model = "local"
role = "Looks for the smallest change that gets most of the benefit."

# A real model, reading its key from an environment variable (never a literal key):
# [[debaters]]
# id = "claude"
# model = "anthropic/claude-sonnet-4-5"
# api_key_env = "ANTHROPIC_API_KEY"
# temperature = 0.7
"""

ADVERSARY = """# A moot adversary spec: one proposer, one distinct critic.
[debate]
title = "Rollout plan review"
motion = "Write the rollout plan for moving sessions from cookies to tokens."
protocol = "adversary"
proposer = "author"
critic = "red-team"          # must differ from the proposer: self-critique is refused
max_rounds = 3               # revise loops before escalating to the operator

[[debaters]]
id = "author"
model = "local"
role = "Writes a concrete, staged rollout plan."

[[debaters]]
id = "red-team"
model = "local"
role = "Finds every way the plan could fail in production."
"""

TEMPLATES = {"debate": DEBATE, "adversary": ADVERSARY}
