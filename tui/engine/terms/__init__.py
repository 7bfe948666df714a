"""What a spec says, as data: the room every other engine room names a spec from.

Nothing is imported here: importing one module loads only what it needs.
"""
