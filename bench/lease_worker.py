"""Workers for the lease row: one holds a claim and heartbeats until it is killed, one rescues it.

python bench/lease_worker.py hold DB ID LEASE     claim ID, print `claimed`, renew every LEASE/4 s
python bench/lease_worker.py rescue DB LEASE      for each ID read on stdin: poll the ready
                                                  list every 50 ms, claim ID once it is there,
                                                  print the wall-clock time of the claim
"""

from __future__ import annotations

import sys
import time

from ollie_nb.tasks import open_store

POLL = 0.05


def hold(db: str, task_id: str, lease: float) -> None:
    """A live worker: its claim is renewed a few times per lease, so only its death ends it."""
    with open_store(db, create=False) as store:
        store.claim(task_id, "doomed", lease=lease)
        print("claimed", flush=True)
        while True:
            time.sleep(lease / 4)
            store.heartbeat(task_id, "doomed", lease=lease)


def rescue(db: str, lease: float) -> None:
    """Another worker, looking for ready work the way a worker idling on a store does."""
    with open_store(db, create=False) as store:
        print("ready", flush=True)
        for line in sys.stdin:
            task_id = line.strip()
            while task_id not in {t.id for t in store.ready()}:
                time.sleep(POLL)
            store.claim(task_id, "rescuer", lease=lease)
            print(f"{time.time():.6f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "hold":
        hold(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        rescue(sys.argv[2], float(sys.argv[3]))
