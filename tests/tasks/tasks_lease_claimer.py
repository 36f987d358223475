"""A claimer for the lease race: claims with a short lease, never renews, until told to stop.

Usage: python tasks_lease_claimer.py DB NAME LEASE STOPFILE ID... Prints each task it won,
one per line, as soon as the claim returned; stops once STOPFILE exists.
"""

from __future__ import annotations

import os
import random
import sys
import time

from ollie_nb.tasks import InvalidTaskError, open_store


def main(db: str, name: str, lease: float, stop: str, ids: list[str]) -> None:
    """Try every task in a fresh random order each round; a refusal is the expected loss.

    A task won is left alone until its lease is surely over (claiming it again sooner
    would renew the lease, as a heartbeat does), then competed for like any other.
    """
    held_until: dict[str, float] = {}
    with open_store(db, create=False) as store:
        while not os.path.exists(stop):
            random.shuffle(ids)
            for task_id in ids:
                if time.monotonic() < held_until.get(task_id, 0.0):
                    continue
                try:
                    store.claim(task_id, name, lease=lease)
                except InvalidTaskError:
                    continue
                held_until[task_id] = time.monotonic() + lease + 0.1
                print(task_id, flush=True)
            time.sleep(0.02)  # a round's pace, so eight of these leave the machine some air


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:])
