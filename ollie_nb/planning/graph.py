"""The one place that turns a plan into a graph: a graphviz Digraph and inline SVG.

graphviz is imported inside the drawing functions only, so importing the planning
package stays cheap and works where graphviz is not installed.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, Union, cast

from ._backends import dependency_layers
from ._collapse import Box, collapse
from ._dot import (
    DOT_TIMEOUT,
    INSTALL_HINT,
    GraphTimeout,
    GraphvizUnavailable,
    require_graphviz,
    svg_of,
)
from ._spend import Spend
from ._state import StepState, read_state
from ._types import PlanStep

_svg_of = svg_of  # the name the drawing tests patch and call

if TYPE_CHECKING:
    import graphviz

__all__ = [
    "COLLAPSE_FROM",
    "DOT_TIMEOUT",
    "INSTALL_HINT",
    "STATUSES",
    "STATUS_STYLES",
    "GraphTimeout",
    "GraphvizUnavailable",
    "PlanView",
    "StatusStyle",
    "direct_after",
    "normalise_status",
    "plan_graph",
    "plan_svg",
    "plan_view",
    "status_word",
]

# -- statuses as drawn ---------------------------------------------------------

# Keys of a status mapping: a 0-based step index, or a step id (or the goal id).
StatusKey = int | str

_V = TypeVar("_V", covariant=True)
# A mapping keyed by step index, by step id, or by either (a Mapping's key type is invariant,
# so a dict[str, str] is not a Mapping[int | str, str]).
StepMap = Union[Mapping[int, _V], Mapping[str, _V], Mapping[StatusKey, _V]]  # noqa: UP007

STATUSES: tuple[StepState, ...] = (
    StepState.OPEN,
    StepState.IN_PROGRESS,
    StepState.DONE,
    StepState.FAILED,
    StepState.BLOCKED,
    StepState.CANCELLED,
    StepState.DEFERRED,
)
"""Every state a drawn step can have, in the legend's order; the last two are drawn greyed."""


def normalise_status(raw: object) -> StepState:
    """The drawn state (one of STATUSES) of a state or a server's word: unknown is drawn open."""
    state = read_state(raw)
    return StepState.OPEN if state is StepState.UNKNOWN else state


def status_word(state: StepState) -> str:
    """A drawn state as a word (a node's class, a plan's text): an open step is "todo"."""
    return "todo" if state is StepState.OPEN else str(state)


@dataclass(frozen=True)
class StatusStyle:
    """How one status is drawn; also what a legend shows for it."""

    fill: str
    border: str
    font: str
    line: str
    label: str
    inactive: bool = False


# Okabe-Ito hues (safe for the common colour-vision deficiencies) as borders, with
# light tints as fills and near-black text, so nodes read the same on light and dark
# page backgrounds; line styles repeat the distinction without colour.
STATUS_STYLES: Mapping[StepState, StatusStyle] = {
    StepState.OPEN: StatusStyle("#FFFFFF", "#0072B2", "#1A1A1A", "solid", "to do"),
    StepState.IN_PROGRESS: StatusStyle("#FBE3B0", "#E69F00", "#1A1A1A", "bold", "in progress"),
    StepState.DONE: StatusStyle("#C5E8DB", "#009E73", "#1A1A1A", "solid", "done"),
    StepState.FAILED: StatusStyle("#F6CCB8", "#D55E00", "#1A1A1A", "bold", "failed"),
    StepState.BLOCKED: StatusStyle("#EBD5E4", "#CC79A7", "#1A1A1A", "dashed", "blocked"),
    StepState.CANCELLED: StatusStyle("#E3E3E3", "#9A9A9A", "#6B6B6B", "dotted", "cancelled", True),
    StepState.DEFERRED: StatusStyle("#E3E3E3", "#9A9A9A", "#6B6B6B", "dotted", "deferred", True),
}


# -- text inside a graph -------------------------------------------------------

EDGE_COLOUR = "#8A8A8A"

_WRAP_WIDTH = 28
_WRAP_LINES = 3

_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    """Drop characters that cannot appear in SVG text."""
    return _UNSAFE_CHARS.sub("", str(text))


def _one_line(text: str) -> str:
    """Text for a single-line label: unsafe characters dropped, whitespace runs made one space."""
    return " ".join(_clean(text).split())


def _wrap_title(text: str, width: int = _WRAP_WIDTH, max_lines: int = _WRAP_LINES) -> list[str]:
    """Wrap a title into at most `max_lines` lines of `width` characters, ending in … if cut."""
    lines = textwrap.wrap(
        _one_line(text), width=width, break_long_words=True, break_on_hyphens=True
    )
    if not lines:
        return [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1].rstrip() + "…"
    return lines


def _escape_line(line: str) -> str:
    """Make one line literal for a DOT escString: backslashes and entities are not interpreted."""
    return line.replace("\\", "\\\\").replace("&", "&amp;")


def _dot_text(lines: Sequence[str]) -> str:
    """A DOT label/tooltip value showing `lines` literally, one per line, never as HTML."""
    from graphviz import nohtml

    text = "\\n".join(_escape_line(line) for line in lines)
    return cast(str, nohtml(text))  # graphviz is untyped; nohtml returns a str subclass


# Some dot versions expand \N, \G, \E, \T, \H, \L in tooltips even when the backslash
# is escaped; an invisible word joiner after the backslash keeps such text literal.
_TOOLTIP_SUBST = re.compile(r"\\(?=[GNETHL])")


def _tooltip(text: str, limit: int) -> str:
    """Tooltip text: the original line breaks kept, cut at `limit` characters."""
    text = _clean(text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ").strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    text = _TOOLTIP_SUBST.sub(lambda m: "\\\u2060", text)
    return _dot_text(text.split("\n"))


def _legend_label(statuses: Sequence[StepState], fontsize: int) -> str:
    """An HTML-like table showing the style of each status present in the plan."""
    rows = []
    for status in STATUSES:
        if status not in statuses:
            continue
        st = STATUS_STYLES[status]
        line = "" if st.line in ("solid", "bold") else f' STYLE="{st.line}"'
        text = f'<FONT COLOR="{st.font}">{st.label}</FONT>'
        if st.line == "bold":
            text = f"<B>{text}</B>"
        rows.append(f'<TR><TD BGCOLOR="{st.fill}" COLOR="{st.border}"{line}>{text}</TD></TR>')
    return (
        f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="3" CELLPADDING="2">'
        f'<TR><TD BORDER="0"><FONT COLOR="{EDGE_COLOUR}" POINT-SIZE="{fontsize}">'
        f"status</FONT></TD></TR>{''.join(rows)}</TABLE>>"
    )


# -- the graph ----------------------------------------------------------------

_GOAL_FILL = "#0072B2"
_GOAL_FONT = "#FFFFFF"
_FONT = "Helvetica,Arial,sans-serif"

# Above this many steps nodes get smaller and tooltips shorter.
_COMPACT_FROM = 40
# Above this many steps edges are drawn straight: spline routing dominates dot's time.
_STRAIGHT_FROM = 150
# Above this many steps the graph is drawn collapsed (finished chains and fan-outs as boxes)
# unless asked for in full: dot needs seconds per thousand nodes, and so does a reader.
COLLAPSE_FROM = 500
_BOX_TOOLTIP_STEPS = 20  # a box's tooltip lists this many of its steps
# The order in which a box of several states takes the style of one: what needs a look first.
_BOX_STATE_ORDER = (
    StepState.FAILED,
    StepState.IN_PROGRESS,
    StepState.BLOCKED,
    StepState.OPEN,
    StepState.DONE,
    StepState.CANCELLED,
    StepState.DEFERRED,
)
# A dependency layer wider than this is staggered over several columns.
_STAGGER_FROM = 10
# A compact node's column pitch over its row pitch: staggering a layer of w steps over
# sqrt(w / _ASPECT) columns makes it about as wide as it is tall.
_ASPECT = 2.5


@dataclass(frozen=True)
class PlanView:
    """A plan as it is drawn: goal, steps, one display id and one effective status per step."""

    goal: str
    steps: tuple[PlanStep, ...]
    ids: tuple[str, ...]
    statuses: tuple[StepState, ...]
    goal_id: str = ""
    groups: tuple[str, ...] = ()
    spend: tuple[Spend | None, ...] = ()  # what working each step used, where known
    heads: tuple[str, ...] = ()  # each node's first line, when not its step number and id


def plan_view(
    goal: str,
    steps: Sequence[PlanStep],
    ids: Sequence[str] | None = None,
    statuses: StepMap[StepState | str | None] | None = None,
    *,
    goal_id: str = "",
    groups: StepMap[str] | None = None,
    spend: StepMap[Spend] | None = None,
) -> PlanView:
    """Check a plan and resolve each step's shown id and status, computing `blocked`.

    An open step with any `after` step not done is `blocked`. `statuses` and `groups`
    are keyed by 0-based step index or by step id; keys that name no step (for
    instance other tasks of a task list) are ignored. Without `ids` steps are shown
    as 1..N.
    """
    steps = tuple(steps)
    n = len(steps)
    if ids is None:
        shown = tuple(str(i + 1) for i in range(n))
    else:
        shown = tuple(str(x) for x in ids)
        if len(shown) != n:
            raise ValueError(f"plan has {n} steps but {len(shown)} ids")
    for i, step in enumerate(steps):
        for a in step.after:
            if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < i:
                raise ValueError(f"step {i} ({step.title!r}): 'after' {a!r} is not an earlier step")
    raw = _by_step(statuses, shown, n)
    given = [normalise_status(raw.get(i)) for i in range(n)]
    effective = tuple(
        StepState.BLOCKED if s.is_open and not all(given[a].unblocks for a in steps[i].after) else s
        for i, s in enumerate(given)
    )
    group_of = _by_step(groups, shown, n)
    group_names = tuple(str(group_of.get(i) or "") for i in range(n)) if group_of else ()
    spent = _by_step(spend, shown, n)
    return PlanView(
        goal=goal,
        steps=steps,
        ids=shown,
        statuses=effective,
        goal_id=str(goal_id or ""),
        groups=group_names,
        spend=tuple(_spend_of(spent.get(i)) for i in range(n)) if spent else (),
    )


def _spend_of(value: object) -> Spend | None:
    return value if isinstance(value, Spend) else None


def _by_step(values: StepMap[object] | None, ids: tuple[str, ...], n: int) -> dict[int, object]:
    """Re-key a mapping by step index; ids win over indexes when both name the same step."""
    if not values:
        return {}
    index_of = {sid: i for i, sid in enumerate(ids)}
    out: dict[int, object] = {}
    for key, value in values.items():
        if isinstance(key, int) and not isinstance(key, bool) and 0 <= key < n:
            out.setdefault(key, value)
    for key, value in values.items():
        if isinstance(key, str) and key in index_of:
            out[index_of[key]] = value
    return out


# Characters XML 1.0 cannot carry (and lone surrogates, which cannot be encoded).
def direct_after(steps: Sequence[PlanStep]) -> list[tuple[int, ...]]:
    """Each step's `after` without the steps it already waits for through another one.

    The transitive reduction of the dependency graph: the drawing shows these edges
    only (a chain of 41 steps each after all earlier ones has 40 edges, not 820), while
    the plan's data keeps every `after` the model wrote. Steps wait only for earlier
    steps, so one pass in step order with ancestor bitsets does it.
    """
    ancestors: list[int] = []
    reduced: list[tuple[int, ...]] = []
    for step in steps:
        after = tuple(dict.fromkeys(step.after))
        through_others = 0
        reach = 0
        for a in after:
            through_others |= ancestors[a]
            reach |= ancestors[a] | (1 << a)
        reduced.append(tuple(a for a in after if not (through_others >> a) & 1))
        ancestors.append(reach)
    return reduced


def _stagger(view: PlanView) -> list[int]:
    """Extra rank length per step that spreads each wide dependency layer over several columns.

    This is what graphviz's `unflatten -l` does, computed here so the result stays a
    Digraph and no second program runs.
    """
    extra = [0] * len(view.steps)
    for members in dependency_layers(view.steps):
        width = len(members)
        if width <= _STAGGER_FROM:
            continue
        columns = max(2, round(math.sqrt(width / _ASPECT)))
        for k, i in enumerate(members):
            extra[i] = k % columns
    return extra


LONG_CHAIN = 4  # layers from which a deeper-than-wide plan is drawn top to bottom (see below)


def readable_rankdir(steps: Sequence[PlanStep], rankdir: str = "LR") -> str:
    """The direction that keeps a plan's labels readable at a cell's width: a left-to-right
    plan deeper than it is wide (a long chain) goes top to bottom, as a wide one would be
    scaled down until its labels are a few pixels tall."""
    layers = dependency_layers(steps)
    deep = len(layers) >= LONG_CHAIN and len(layers) > max(map(len, layers), default=0)
    return "TB" if rankdir == "LR" and deep else rankdir


def plan_graph(
    goal: str,
    steps: Sequence[PlanStep],
    ids: Sequence[str] | None = None,
    statuses: StepMap[StepState | str | None] | None = None,
    *,
    goal_id: str = "",
    groups: StepMap[str] | None = None,
    spend: StepMap[Spend] | None = None,
    rankdir: str = "LR",
    legend: bool = True,
    compact: bool | None = None,
    expand: bool = False,
) -> graphviz.Digraph:
    """Build the plan's graph: goal node, one node per step coloured by status, `after` edges.

    Edges point from blocker to dependent; steps without `after` hang off the goal by
    dashed edges. Hovering a step shows its body. `compact` (default: more than 40
    steps) uses smaller nodes and shorter tooltips; big plans also get straight edges
    and staggered wide layers so dot stays fast and the drawing stays readable. Past
    COLLAPSE_FROM steps the graph is drawn collapsed (see collapsed_view) unless `expand`.
    """
    view = plan_view(goal, steps, ids, statuses, goal_id=goal_id, groups=groups, spend=spend)
    if not expand and len(view.steps) > COLLAPSE_FROM:
        view = collapsed_view(view)
    return _graph_of(view, rankdir=rankdir, legend=legend, compact=compact)


def collapsed_view(view: PlanView) -> PlanView:
    """The view with finished chains and fan-out groups as one box each, with their counts."""
    boxes = collapse(direct_after(view.steps), view.statuses)
    return PlanView(
        goal=view.goal,
        steps=tuple(_box_step(view, box) for box in boxes),
        ids=tuple(_box_head(view, box) for box in boxes),
        statuses=tuple(_box_state(view, box) for box in boxes),
        goal_id=view.goal_id,
        heads=tuple(_box_head(view, box) for box in boxes),
    )


def _step_head(view: PlanView, i: int) -> str:
    """A step's first line: its number, then its task id when that differs."""
    number = str(i + 1)  # as the plan's text and the commands name it
    return number if view.ids[i] == number else f"{number} · {view.ids[i]}"


def _box_head(view: PlanView, box: Box) -> str:
    if len(box.members) == 1:
        return _step_head(view, box.members[0])
    first, last = box.members[0] + 1, box.members[-1] + 1
    return f"{len(box.members):,} steps ({first}–{last})"


def _box_counts(view: PlanView, box: Box) -> dict[StepState, int]:
    counts = dict.fromkeys(_BOX_STATE_ORDER, 0)
    for i in box.members:
        counts[view.statuses[i]] += 1
    return {state: n for state, n in counts.items() if n}


def _box_state(view: PlanView, box: Box) -> StepState:
    return next(iter(_box_counts(view, box)))


def _box_step(view: PlanView, box: Box) -> PlanStep:
    """A box as a step: its one step, or its counts as title and a list of its steps as body."""
    if len(box.members) == 1:
        step = view.steps[box.members[0]]
        return PlanStep(step.title, step.body, box.after)
    counts = _box_counts(view, box)
    title = " · ".join(f"{n:,} {STATUS_STYLES[state].label}" for state, n in counts.items())
    shown = [f"{i + 1}. {view.steps[i].title}" for i in box.members[:_BOX_TOOLTIP_STEPS]]
    more = len(box.members) - len(shown)
    body = "\n".join([*shown, f"… and {more:,} more"] if more else shown)
    return PlanStep(title, body, box.after)


def _graph_of(
    view: PlanView, *, rankdir: str, legend: bool, compact: bool | None
) -> graphviz.Digraph:
    """Draw a resolved PlanView (see plan_graph)."""
    n = len(view.steps)
    compact = n > _COMPACT_FROM if compact is None else compact
    fontsize = 9 if compact else 11
    tooltip_limit = 300 if compact else 2000
    g = _digraph(view, rankdir, compact, fontsize)
    _add_goal(g, view, fontsize, tooltip_limit)
    if legend and n:
        g.node(
            "legend",
            label=_legend_label(view.statuses, fontsize),
            shape="plaintext",
            margin="0",
            fontsize=str(fontsize),
            **{"class": "plan-legend"},
        )
    clusters = _clusters(view, fontsize)
    _add_steps(g, view, clusters, tooltip_limit)
    for c in clusters.values():
        g.subgraph(c)
    extra = _stagger(view)
    for i, after in enumerate(direct_after(view.steps)):
        minlen = str(1 + extra[i]) if extra[i] else None
        if not after:
            g.edge("goal", f"s{i}", style="dashed", minlen=minlen)
        for a in after:
            g.edge(f"s{a}", f"s{i}", minlen=minlen)
    return g


def _digraph(view: PlanView, rankdir: str, compact: bool, fontsize: int) -> graphviz.Digraph:
    """The empty graph with its layout, node and edge attributes."""
    graph_attr = {
        "rankdir": rankdir,
        "bgcolor": "transparent",
        "fontname": _FONT,
        "nodesep": "0.12" if compact else "0.25",
        "ranksep": "0.3" if compact else "0.45",
        "newrank": "true",
    }
    if compact and not view.groups:
        # Merges the fans of edges out of one node so staggered layers pack tightly;
        # dot cannot combine it with clusters.
        graph_attr["concentrate"] = "true"
    if len(view.steps) >= _STRAIGHT_FROM:
        # Long edges make thousands of virtual nodes; placing them is most of dot's time.
        graph_attr.update(splines="line", nslimit="0.5", nslimit1="2", mclimit="0.3")
    return require_graphviz().Digraph(
        "plan",
        graph_attr=graph_attr,
        node_attr={
            "shape": "box",
            "fontname": _FONT,
            "fontsize": str(fontsize),
            "margin": "0.06,0.03" if compact else "0.1,0.05",
            "height": "0.3",
            "penwidth": "1.2",
        },
        edge_attr={"color": EDGE_COLOUR, "arrowsize": "0.6", "penwidth": "1"},
    )


def _add_goal(g: graphviz.Digraph, view: PlanView, fontsize: int, tooltip_limit: int) -> None:
    goal_lines = _wrap_title(view.goal, width=36)
    if view.goal_id:
        goal_lines = [_one_line(view.goal_id), *goal_lines]
    g.node(
        "goal",
        label=_dot_text(goal_lines),
        tooltip=_tooltip(view.goal, tooltip_limit) if view.goal.strip() else None,
        style="filled,rounded,bold",
        fillcolor=_GOAL_FILL,
        color=_GOAL_FILL,
        fontcolor=_GOAL_FONT,
        fontsize=str(fontsize + 1),
        **{"class": "plan-goal"},
    )


def _clusters(view: PlanView, fontsize: int) -> dict[str, graphviz.Digraph]:
    """One dashed cluster per named group of steps."""
    digraph = require_graphviz().Digraph
    clusters: dict[str, graphviz.Digraph] = {}
    for name in dict.fromkeys(x for x in view.groups if x):
        clusters[name] = digraph(
            f"cluster_{len(clusters)}",
            graph_attr={
                "label": _dot_text([_one_line(name)]),
                "style": "dashed,rounded",
                "color": EDGE_COLOUR,
                "fontcolor": EDGE_COLOUR,
                "fontsize": str(fontsize),
            },
        )
    return clusters


def _add_steps(
    g: graphviz.Digraph,
    view: PlanView,
    clusters: Mapping[str, graphviz.Digraph],
    tooltip_limit: int,
) -> None:
    for i, step in enumerate(view.steps):
        status = view.statuses[i]
        st = STATUS_STYLES[status]
        head = view.heads[i] if view.heads else _step_head(view, i)
        lines = [_one_line(head), *_wrap_title(step.title)]
        if st.inactive:
            lines[0] = f"{lines[0]} ({st.label})"
        body = step.body if step.body.strip() else step.title
        spent = view.spend[i] if view.spend else None
        if spent is not None:  # numbers of our own, yet drawn through the same escaping
            lines.append(f"{spent.tokens:,} tokens · {spent.cost_text}")
            body = f"{body}\n\nused {spent}"
        target = clusters.get(view.groups[i]) if view.groups and view.groups[i] else None
        (target or g).node(
            f"s{i}",
            label=_dot_text(lines),
            tooltip=_tooltip(body, tooltip_limit) if body.strip() else None,
            style=f"filled,rounded,{st.line}",
            fillcolor=st.fill,
            color=st.border,
            fontcolor=st.font,
            **{"class": f"plan-step status-{status_word(status)}"},
        )


def plan_svg(
    goal: str,
    steps: Sequence[PlanStep],
    ids: Sequence[str] | None = None,
    statuses: StepMap[StepState | str | None] | None = None,
    *,
    goal_id: str = "",
    groups: StepMap[str] | None = None,
    spend: StepMap[Spend] | None = None,
    rankdir: str = "LR",
    legend: bool = True,
    compact: bool | None = None,
    expand: bool = False,
    timeout: float = DOT_TIMEOUT,
) -> str:
    """Render the plan graph as SVG text ready to inline in HTML (no prolog, no version comment).

    Raises GraphvizUnavailable without graphviz, GraphTimeout when dot takes more than
    `timeout` seconds (dot is killed); both mean "show the text plan instead".
    """
    g = plan_graph(
        goal,
        steps,
        ids,
        statuses,
        goal_id=goal_id,
        groups=groups,
        spend=spend,
        rankdir=rankdir,
        legend=legend,
        compact=compact,
        expand=expand,
    )
    return svg_of(g, timeout)
