"""A writer for the cursor test: connects, says `ready`, waits for a line, then creates N tasks.

Usage: python tasks_event_writer.py DB N (each create logs exactly one event).
"""

from __future__ import annotations

import sys

from ollie_nb.tasks import open_store


def main(db: str, count: int) -> None:
    """Create `count` tasks as fast as the store takes them, once told to start."""
    with open_store(db, create=False) as store:
        store.last_seq()  # connected and the schema checked before saying ready
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(count):
            store.create(f"event {i}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
