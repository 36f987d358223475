"""A store writer for the crash test: creates tasks with blockers and labels until killed.

Usage: python tasks_writer.py DB (a SQLite path or a postgresql:// URL). Prints the running count of created tasks, one per line.
"""

from __future__ import annotations

import random
import sys

from ollie_nb.tasks import open_store


def main(db: str) -> None:
    """Write forever; every task has up to three blockers and two labels."""
    store = open_store(db)
    recent = [t.id for t in store.list("all")][-20:]
    count = 0
    while True:
        blockers = random.sample(recent, k=min(len(recent), 3))
        task_id = store.create(
            f"task {count}",
            body="x" * random.randint(0, 4000),
            blockers=blockers,
            labels=["crash", f"n{count % 7}"],
        )
        if recent and random.random() < 0.3:
            store.update(random.choice(recent), status="done", note="done by the writer")
        recent = [*recent[-19:], task_id]
        count += 1
        print(count, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
