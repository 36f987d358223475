"""`python -m ollie_nb work --agent FILE ...`: a headless worker (see ollie_nb/work.py)."""

from __future__ import annotations

import sys

USAGE = "usage: python -m ollie_nb work --agent FILE [--plan GOAL_ID] [--parallel N] [--name NAME] [--until-idle]"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "work":
        print(USAGE, file=sys.stderr)
        return 2
    from ollie_nb.work import main as work

    return work(args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
