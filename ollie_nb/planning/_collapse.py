"""The readable form of a large plan graph: finished chains and fan-out groups as one box each.

Steps are grouped in three passes over the drawn (transitively reduced) `after` edges, and
the boxes and the edges between them form a graph of their own, still acyclic and still
in step order (each box after the boxes its members wait for):
1. a finished chain: done steps each waiting only for the one before, which nothing else
   waits for, become one box;
2. a fan-out group: boxes waiting for exactly the same boxes become one box;
3. only when that still leaves more than MAX_BOXES boxes: the boxes of one dependency layer.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from ._state import StepState

MAX_BOXES = 300  # past this many boxes after chains and fan-outs, each layer is one box


@dataclass(frozen=True)
class Box:
    """Steps drawn as one node: their 0-based indexes in step order, and the boxes before it."""

    members: tuple[int, ...]
    after: tuple[int, ...]


def collapse(after: Sequence[Sequence[int]], statuses: Sequence[StepState]) -> list[Box]:
    """Group steps (each `after` already reduced) into boxes, in step order."""
    group = _finished_chains(after, statuses)
    group = _merge(after, group, lambda g, parents: parents)
    if len(set(group)) > MAX_BOXES:
        layer = _layers(after, group)
        group = _merge(after, group, lambda g, parents: layer[g])
    return _boxes(after, group)


def _finished_chains(after: Sequence[Sequence[int]], statuses: Sequence[StepState]) -> list[int]:
    """Each step's group: a done step joins the done step before it when they form a chain."""
    dependents = [0] * len(after)
    for blockers in after:
        for a in blockers:
            dependents[a] += 1
    group = list(range(len(after)))
    for i, blockers in enumerate(after):
        if len(blockers) != 1 or statuses[i] is not StepState.DONE:
            continue
        (a,) = blockers
        if statuses[a] is StepState.DONE and dependents[a] == 1:
            group[i] = group[a]
    return group


def _parents(after: Sequence[Sequence[int]], group: Sequence[int]) -> dict[int, frozenset[int]]:
    """Each group's blockers outside it, as groups."""
    parents: dict[int, set[int]] = {g: set() for g in group}
    for i, blockers in enumerate(after):
        parents[group[i]].update(group[a] for a in blockers if group[a] != group[i])
    return {g: frozenset(p) for g, p in parents.items()}


def _merge(
    after: Sequence[Sequence[int]],
    group: Sequence[int],
    key: Callable[[int, frozenset[int]], Hashable],
) -> list[int]:
    """Merge the groups of one key (the key sees a group and its blockers) into one group."""
    parents = _parents(after, group)
    first: dict[Hashable, int] = {}
    for g in sorted(parents):
        first.setdefault(key(g, parents[g]), g)
    merged = {g: first[key(g, parents[g])] for g in parents}
    return [merged[g] for g in group]


def _layers(after: Sequence[Sequence[int]], group: Sequence[int]) -> dict[int, int]:
    """Each group's dependency layer: one more than the deepest group it waits for."""
    parents = _parents(after, group)
    layer: dict[int, int] = {}
    for g in sorted(parents):  # a group's blockers start earlier, so come first
        layer[g] = 1 + max((layer[p] for p in parents[g]), default=-1)
    return layer


def _boxes(after: Sequence[Sequence[int]], group: Sequence[int]) -> list[Box]:
    """The groups as boxes in step order, with their blockers as box indexes."""
    order = sorted(set(group))
    index = {g: k for k, g in enumerate(order)}
    members: dict[int, list[int]] = {g: [] for g in order}
    for i, g in enumerate(group):
        members[g].append(i)
    parents = _parents(after, group)
    return [Box(tuple(members[g]), tuple(sorted(index[p] for p in parents[g]))) for g in order]
