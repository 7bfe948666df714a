"""Session file constants, in a module light enough for the console's start-up path.

The home screen peeks at session files without loading the engine; both read
these names from here so the format has one definition.
"""

SCHEMA = "moot.session/1"
COMMIT = "# moot:commit\n"
