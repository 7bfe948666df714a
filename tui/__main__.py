"""Allow ``python -m tui``."""

from tui.cli import main

raise SystemExit(main())
