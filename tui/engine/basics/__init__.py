"""What every room stands on: the typed vocabularies, errors, input bounds, safe
file reads, secrets kept out, model families and client rules.

Nothing is imported here: importing one module loads only what it needs.
"""
