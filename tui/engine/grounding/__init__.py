"""What a debater may see and look up: the read roots, roles, ``[[context]]``
documents, lookups through the tool port, and evidence rubrics.

Nothing is imported here: importing one module loads only what it needs.
"""
