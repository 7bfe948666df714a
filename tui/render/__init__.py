"""The output renderers: a turn presented, text made safe for each output, exports and the ADR.

No Textual and no provider here (an import contract): the console, the headless
printer, the CLI and the MCP server all render through these.
"""
