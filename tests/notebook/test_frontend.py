"""The notebook frontend in a real kernel: magics, streaming, plan graphs, fallbacks, tasks."""

from __future__ import annotations

import textwrap

import pytest

from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel
from tests.support.waits import output_until

LIST_PROMPT = (
    "%%ollie\nShip the report\n- Collect data\n- Clean data\n- Draw charts (after 2)\n- Publish"
)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("nb")
    k = Kernel(str(base), kernel_env(base))
    k.base = base
    ok = k.run("%load_ext ollie_nb")
    assert ok.error is None, ok.error
    yield k
    k.shutdown()


def test_help_and_usage_errors(kernel):
    help_run = kernel.run("%ollie help")
    assert "%ollie COMMAND" in help_run.text() and help_run.error is None
    unknown = kernel.run("%ollie stauts")
    assert unknown.error is None  # UsageError: one line, not a traceback
    assert "unknown command 'stauts'; did you mean 'status'?" in unknown.stderr()
    assert "Traceback" not in unknown.stderr()
    bad_option = kernel.run("%%ollie --frobnicate\nhello")
    assert "%%ollie: unknown option '--frobnicate'" in bad_option.stderr()
    empty = kernel.run("%%ollie\n   ")
    assert "the prompt is empty" in empty.stderr()
    no_value = kernel.run("%%ollie --model\nhello")
    assert no_value.stderr().strip() == "UsageError: %%ollie: --model needs a value"


def test_offline_prompt_streams_a_reply(kernel):
    run = kernel.run("%%ollie\nhello there")
    assert run.error is None
    texts = run.texts()
    assert any(t.startswith("I am the offline model") for t in texts)
    footer = texts[-1]  # the usage footer: this turn's figures, then the session's
    assert footer.startswith("this turn: ") and " s — session: " in footer


def test_list_prompt_draws_the_plan_graph(kernel):
    run = kernel.run(LIST_PROMPT)
    assert run.error is None
    plan = next(
        o
        for o in run.outputs
        if "Plan: Ship the report" in o.get("data", {}).get("text/plain", "")
        and "<svg" in o["data"].get("text/html", "")
    )
    assert "Draw charts" in plan["data"]["text/html"]
    listing = kernel.run("%ollie plans")
    assert "Ship the report" in listing.text()
    again = kernel.run("%ollie plan 1")
    assert "<svg" in again.html()


def test_semicolon_silences_and_out_keeps_results(kernel):
    silent = kernel.run("%ollie usage;")
    assert silent.outputs == []
    shown = kernel.run("r = %ollie usage\nprint(type(r).__name__, r.text().startswith('ℹ usage:'))")
    assert "UsageView True" in shown.text()


FALLBACKS = {
    "class": """
        class Sheet:
            def __init__(self):
                self.rows = []
            def create_plan(self, goal, steps):
                self.rows = [(goal, s.title, list(s.after)) for s in steps]
                return [f"row-{i}" for i in range(len(steps))]
        sheet = Sheet()
        """,
    "function": """
        import threading
        seen = []
        def sheet_fn(goal, steps):
            seen.append((goal, [s.title for s in steps], threading.current_thread().name))
            return [f"fn-{i}" for i in range(len(steps))]
        """,
    "async": """
        import asyncio
        class AsyncSheet:
            async def create_plan(self, goal, steps):
                await asyncio.sleep(0)
                return [f"as-{i}" for i in range(len(steps))]
        async_sheet = AsyncSheet()
        """,
    "raises": """
        def broken(goal, steps):
            raise ConnectionError("the spreadsheet is offline")
        """,
    "too_few": """
        def stingy(goal, steps):
            return ["only-one"]
        """,
}


@pytest.mark.parametrize(
    ("kind", "var", "expect"),
    [
        ("class", "sheet", "[row-2] Draw charts"),
        ("function", "sheet_fn", "[fn-0] Collect data"),
        ("async", "async_sheet", "[as-3] Publish"),
        ("raises", "broken", "broken() failed (the spreadsheet is offline)"),
        ("too_few", "stingy", "stingy() returned 1 ids for 4 steps"),
    ],
)
def test_notebook_defined_fallbacks(kernel, kind, var, expect):
    assert kernel.run(textwrap.dedent(FALLBACKS[kind])).error is None
    wired = kernel.run(f"%ollie fallback {var}")
    assert "fallback set to" in wired.text()
    run = kernel.run(LIST_PROMPT)
    assert expect in run.text()
    if kind in ("raises", "too_few"):
        assert any(t.startswith("⚠ ") and "context only" in t for t in run.texts())
    if kind == "class":
        rows = kernel.run("print(sheet.rows[3])")
        assert "('Ship the report', 'Publish', [2])" in rows.text()
    if kind == "function":
        check = kernel.run("print(len(seen), seen[0][2])")
        assert "1 MainThread" in check.text()
    kernel.run("%ollie fallback off")


def test_fallback_runs_user_code_on_the_kernel_thread(kernel):
    code = textwrap.dedent(
        """
        import threading
        where = []
        def record_thread(goal, steps):
            where.append(threading.current_thread() is threading.main_thread())
            return [str(i) for i in range(len(steps))]
        """
    )
    kernel.run(code)
    kernel.run("%ollie fallback record_thread")
    kernel.run(LIST_PROMPT)
    assert "[True]" in kernel.run("print(where)").text()
    kernel.run("%ollie fallback off")


def test_fallback_errors_are_usage_errors(kernel):
    assert "no variable named 'nothing_here'" in kernel.run("%ollie fallback nothing_here").stderr()
    kernel.run("not_a_backend = 42")
    assert "int is not a plan backend" in kernel.run("%ollie fallback not_a_backend").stderr()


def test_missing_dot_shows_the_text_plan(kernel):
    made = kernel.run(LIST_PROMPT)  # its own plan: the test runs alone or in any order
    assert made.error is None and "Plan: Ship the report" in made.text()
    kernel.run("import os; _saved_path = os.environ['PATH']; os.environ['PATH'] = '/nonexistent'")
    try:
        run = kernel.run("%ollie plan")
    finally:
        kernel.run("os.environ['PATH'] = _saved_path")
    assert run.error is None
    assert "Plan: Ship the report" in run.text()
    assert "the Graphviz dot program is not installed" in run.text()
    assert "Traceback" not in run.text() + run.stderr()
    assert "<svg" not in run.html()


def test_config_traits(kernel):
    kernel.run("%config OllieMagics.show_tools = False")
    try:
        run = kernel.run(LIST_PROMPT)
        assert not any(t.startswith("→ reasoning_plan") for t in run.texts())
    finally:
        kernel.run("%config OllieMagics.show_tools = True")
    bad = kernel.run("%config OllieMagics.rankdir = 'diagonal'")
    assert "expected any of ['LR', 'TB', 'RL', 'BT'], not the str 'diagonal'" in bad.stderr()
    assert "LR" in kernel.run("print(get_ipython().find_magic('ollie').__self__.rankdir)").text()


def test_interpolation_is_opt_in(kernel):
    kernel.run("region = 'north'")
    literal = kernel.run("%%ollie\nReport for {region}\n- a\n- b")
    assert "Plan: Report for {region}" in literal.text()
    formatted = kernel.run("%%ollie -i\nReport for {region}\n- a\n- b")
    assert "Plan: Report for north" in formatted.text()
    missing = kernel.run("%%ollie -i\nReport for {nowhere}")
    assert "cannot format the prompt" in missing.stderr()


def test_python_api(kernel):
    code = "import ollie_nb\nh = ollie_nb.agent()\nprint(repr(h).startswith('<ollie agent'))\nreply = h.ask('hello', show=False)\nprint(reply.startswith('I am the offline model'))"
    assert kernel.run(code).text().splitlines() == ["True", "True"]
    api = kernel.run(
        "reply = await ollie_nb.agent().aask('Plan\\n- x\\n- y')\nprint(reply.splitlines()[0])"
    )
    assert "Planned 2 steps for: Plan." in api.text()


def test_task_server_agent_persists_and_shows_statuses(kernel, tmp_path):
    agent = tasks_agent_file(tmp_path)
    switched = kernel.run(f"%ollie agent {agent}")
    assert "MCP server 'tasks' exposes task_create" in switched.text()
    run = kernel.run(LIST_PROMPT)
    assert "Plan saved on task server 'tasks'" in run.text()
    tasks = kernel.run("%ollie tasks")
    lines = [line for line in tasks.text().splitlines() if "Collect data" in line]
    assert lines and "open" in lines[0]
    task_id = lines[0].split()[0]
    # mark the first step done through the Python API, then the graph shows it
    kernel.run(
        "import ollie_nb\nh = ollie_nb.agent()\n"
        f"r = h.call(lambda core: core.servers.dispatcher.dispatch('tasks', 'task_update', {{'id': '{task_id}', 'status': 'done'}}))\n"
        "print(r.text)"
    )
    graph = kernel.run("%ollie plan")
    assert "1 of 4 steps done" in graph.html()
    second = next(line for line in tasks.text().splitlines() if "Clean data" in line).split()[0]
    claim = {"id": second, "assignee": "bob", "lease": 60}
    kernel.run(  # bob, another client, claims a step: %ollie tasks says who holds it
        f"h.call(lambda core: core.servers.dispatcher.dispatch('tasks', 'task_claim', {claim!r}))\nNone"
    )
    held = [line for line in kernel.run("%ollie tasks").text().splitlines() if second in line]
    assert held and "in_progress" in held[0] and "@bob; lease ends " in held[0], held
    assert graph.text().splitlines()[-1] == "1 of 4 steps done"  # what nbval compares
    assert any(
        line.endswith(" Collect data") and " done " in line for line in graph.text().splitlines()
    )
    mcp = kernel.run("%ollie mcp")
    assert "task server 'tasks'" in mcp.text()
    back = kernel.run("%ollie agent default")
    assert "no MCP server exposes task_create" in back.text()


def test_unload_and_reload(kernel):
    kernel.run("%ollie status")
    kernel.run("get_ipython().config.OllieMagics.rankdir = 'diagonal'")  # a bad saved setting
    unload = kernel.run(
        "%unload_ext ollie_nb\nimport threading\nprint([t.name for t in threading.enumerate() if t.name == 'ollie-runtime'])"
    )
    assert "[]" in unload.text()
    gone = kernel.run("%ollie help")
    assert gone.error is None  # IPython reports an unknown magic as a UsageError line
    assert gone.stderr() == "UsageError: Line magic function `%ollie` not found.\n"
    reload = kernel.run("%load_ext ollie_nb\n%ollie help")
    assert "%ollie COMMAND" in reload.text()
    # the bad setting in the config is skipped with a note, not a failed load
    assert "ignoring OllieMagics config" in reload.stderr()
    assert "Ship the report" not in kernel.run("%ollie plans").text()  # a fresh runtime


def test_tab_completion(kernel):
    kernel.run(
        "class MyPlans:\n    def create_plan(self, goal, steps): return []\nmy_plans = MyPlans()"
    )
    reply = kernel.kc.complete("%ollie sta", 10, reply=True, timeout=10)["content"]
    assert "status" in reply["matches"]
    reply = kernel.kc.complete("%ollie fallback ", 16, reply=True, timeout=10)["content"]
    assert {"queue", "off", "my_plans"} <= set(reply["matches"])


OTHER_CLIENT = """
import sys
from pathlib import Path
import ollie_nb
from ollie_nb.tools import McpServer

async def other_client(db, *updates):
    args = ["-m", "ollie_nb.tasks", "serve", "--db", db]
    tree = {"PYTHONPATH": str(Path(ollie_nb.__file__).parents[1])}  # the tree under test
    other = McpServer("other", command=sys.executable, args=args, env=tree)
    await other.connect()
    try:
        for update in updates:
            result = await other.call_tool("task_update", update)
            assert not result.is_error, result.text
    finally:
        await other.aclose()
"""


def test_watch_wakes_the_agent_when_another_client_finishes_a_step(kernel, tmp_path):
    agent = tasks_agent_file(tmp_path)
    db = str(tmp_path / "tasks.db")
    kernel.run(f"%ollie agent {agent}")
    kernel.run("%%ollie\nShip it\n- Build\n- Test\n- Release")
    assert "not watching" in kernel.run("%ollie watch").text()
    kernel.run(OTHER_CLIENT)
    plan = "import ollie_nb\nrec = ollie_nb.agent().plans[-1]\nprint(rec.number, *rec.ids)"
    number, build, test, _release = kernel.run(plan).text().split()
    claim = f"await other_client({db!r}, {{'id': {build!r}, 'status': 'in_progress'}})"
    assert kernel.run(claim).error is None
    on = kernel.run("w = get_ipython().run_line_magic('ollie', 'watch on')\nw")
    assert on.text() == "ollie: watching task events (steps worked by the agent show in the widget)"
    assert "(subscribed); 0 queued" in kernel.run("%ollie watch").text()  # Build is taken
    done = f"await other_client({db!r}, {{'id': {build!r}, 'status': 'done'}})"
    assert kernel.run(done).error is None  # another process: the agent carries on by itself
    status = output_until(kernel, "%ollie watch", "is finished")
    assert f"step 1 of plan {number} is done ({build}), marked by another client: Build" in status
    assert f"plan {number} is finished: Ship it (all 3 steps done)" in status
    shown = output_until(kernel, "print(w.steps, w.watching)", "2 True")
    assert shown.strip() == "2 True"  # Test and Release, worked by the agent in the widget
    shown_outputs = "print([o['data']['text/plain'] for o in w.output.outputs])"
    outputs = output_until(kernel, shown_outputs, "3 of 3 steps done")
    assert f"Step 2 of 3 [task {test}]: Test" in outputs
    assert "Completed step: Release" in outputs
    assert f"plan {number} is finished: Ship it (all 3 steps done)" in outputs
    assert "3 of 3 steps done" in outputs  # the finished plan's graph, under its line
    plans = kernel.run("%ollie plans").text().splitlines()
    assert any(line.split()[:3] == [number, "Ship", "it"] and "done" in line for line in plans)
    assert "stopped watching" in kernel.run("%ollie watch off").text()
    assert "the watch is off" in output_until(kernel, "print(w.status.value)", "the watch is off")
    again = kernel.run("w2 = get_ipython().run_line_magic('ollie', 'watch on')\nw2.stop()")
    assert again.error is None
    stopped = output_until(kernel, "print(w2.status.value, w2.stop_button.disabled)", "True")
    assert "the watch is off" in stopped and "True" in stopped  # the Stop button ended it
    assert "not watching" in kernel.run("%ollie watch").text()
    kernel.run("%ollie agent default")
