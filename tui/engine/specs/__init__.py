"""The spec: its models, every problem by key path (each protocol's own rules
asked of the protocol), and how large its session could grow.

Nothing is imported here: importing one module loads only what it needs.
"""
