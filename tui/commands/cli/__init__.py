"""Each command's command line: ``add_arguments`` gives it its arguments on the parser
``tui.cli`` made for it, ``run`` does it. ``tui.cli`` imports a command's module only when
that command is parsed, and each module imports its work inside ``run``, so building the
parser stays light: no pydantic, no protocol, no Rich before a command runs."""
