"""Reading a spec: every problem by key path (each protocol's own rules asked of the
protocol, its documents and tools checked on disk), and how large its session could grow.
The spec's models are ``tui.engine.terms``'s.

Nothing is imported here: importing one module loads only what it needs.
"""
