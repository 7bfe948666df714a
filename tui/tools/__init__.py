"""The tools debaters may look things up with: the built-in files tool and MCP servers.

The engine defines the port (``tui.engine.core.ports.ToolBox``) and decides every
lookup; this package only runs the calls it is given.
"""
