"""A claimer for the race test: tries to claim every given task, prints the ids it won.

Usage: python tasks_claimer.py DB NAME ID... (tries the ids in a random order).
"""

from __future__ import annotations

import random
import sys

from ollie_nb.tasks import InvalidTaskError, open_store


def main(db: str, name: str, ids: list[str]) -> None:
    """Claim as `name`; a refusal (someone else won, or not ready) is the expected loss."""
    random.shuffle(ids)
    with open_store(db, create=False) as store:
        for task_id in ids:
            try:
                store.claim(task_id, name)
            except InvalidTaskError:
                continue
            print(task_id, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
