"""Commented starting specs for ``moot new``; each validates as written."""

from __future__ import annotations

DEBATE = """# A moot debate spec. Validate with: moot validate {name}
[debate]
title = "Adopt event sourcing for the order service?"
motion = "Move the order service to event sourcing this quarter."
protocol = "debate"          # debate | adversary | challenge | refine
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

CHALLENGE = '''# A moot challenge/defense spec: an adversary challenges an artifact, a defender answers.
[debate]
title = "Cache plan review"
motion = "Plan to put a cache in front of the catalogue API."
protocol = "challenge"
defender = "owner"
adversary = "reviewer"       # must differ from the defender
mode = "blocking"            # blocking: unresolved critical challenges block release
                             # advisory: the adversary informs, the operator decides
max_rounds = 3
artifact = """Cache every catalogue response for 24 hours.
Invalidate nothing: prices change rarely."""

[[debaters]]
id = "owner"
model = "local"
role = "Owns the plan and defends it, or fixes it."

[[debaters]]
id = "reviewer"
model = "local"
role = "Challenges the plan with evidence quoted from it."

# Evidence rubric (optional): verdicts need admitted evidence, default no.
# [rubric]
# applies_to = ["adversary"]
# [[rubric.properties]]
# id = "invalidation"
# question = "Does the plan say how stale prices are invalidated?"
# admissible = ["artifact_quote"]
'''

REFINE = """# A moot refine spec: author, critic, second author, synthesizer, blind judge panel.
[debate]
title = "Name the on-call tool"
motion = "Propose a name and a one-line description for the on-call handover tool."
protocol = "refine"
authors = ["author-a", "author-b"]
critic = "critic"            # may not be an author: self-critique is refused
synthesizer = "synth"
judges = ["judge-1", "judge-2", "judge-3"]   # an odd panel of 3 to 7, none an author
convergence = 3              # incumbent wins in a row that end the loop
position_swap = false        # true: ask each judge both ways; a flip is no preference
# seed = 42                  # judge X/Y order; drawn and recorded when absent
max_rounds = 6

[[debaters]]
id = "author-a"
model = "local"

[[debaters]]
id = "author-b"
model = "local"

[[debaters]]
id = "critic"
model = "local"

[[debaters]]
id = "synth"
model = "local"

[[debaters]]
id = "judge-1"
model = "local"

[[debaters]]
id = "judge-2"
model = "local"

[[debaters]]
id = "judge-3"
model = "local"
"""

TEMPLATES = {"debate": DEBATE, "adversary": ADVERSARY, "challenge": CHALLENGE, "refine": REFINE}
