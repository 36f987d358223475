"""`python -m ollie_nb.tasks`: the same as the `ollie-tasks` command."""

from __future__ import annotations

from ollie_nb.tasks.cli import main

raise SystemExit(main())
