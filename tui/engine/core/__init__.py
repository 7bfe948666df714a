"""The debate's data: a turn and its content models, how it presents, the schedule,
the tally, the bounded state, the provider port and the events.

Nothing is imported here: importing one module loads only what it needs.
"""
