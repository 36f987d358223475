"""Features used together in a real kernel, as a user meets them (issue 22): the parallel run's
table and usage after the agent did a step itself, the watch turned off with steps queued,
plans named by their goal, session names (real ollie-tasks subprocesses on SQLite files).
"""

from __future__ import annotations

import time

import pytest

from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel
from tests.support.task_db import snapshot
from tests.support.waits import output_until, wait_until

DIAMOND = "%%ollie\nShip it\n- Prepare\n- Left (after 1)\n- Middle (after 1)\n- Right (after 1)\n- Join (after 2, 3, 4)"
WIDE = "%%ollie\nEight chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 9))
COUNTING = """
import asyncio, ollie_nb
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt
requests = []

async def counted(messages, tools):
    requests.append(1)
    if messages[-1].role == 'user' and is_step_prompt(messages[-1].content):
        await asyncio.sleep(STEP_SECONDS)
    return demo_reply(messages, tools)

ollie_nb.agent().core.set_backend(OfflineBackend(counted))
"""
PROBE = (
    "from ollie_nb.notebook._parallel_widget import ParallelRunView\n"
    "import gc\nv = [o for o in gc.get_objects() if isinstance(o, ParallelRunView)][-1]\n"
    "print(v.status.value)\nprint(repr(str(v.log.outputs)))\n"
    "print([v.tabs.get_title(i) for i in range(len(v.tabs.children))])"
)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("nbcollide")
    k = Kernel(str(base), kernel_env(base))
    k.base = base
    k.run("%load_ext ollie_nb")
    assert k.run(f"%ollie agent {tasks_agent_file(base)}").error is None
    yield k
    k.shutdown()


def counting_model(k: Kernel, seconds: float) -> None:
    assert k.run(COUNTING.replace("STEP_SECONDS", str(seconds))).error is None


def test_a_step_the_agent_finished_shows_done_and_every_request_is_counted(kernel):
    k = kernel
    counting_model(k, 0.05)
    k.run(DIAMOND)
    step_one = (
        "core = ollie_nb.agent().core\nrecord = core.plans[-1]\n"
        "prompt = f'Step 1 of 5 [task {record.ids[0]}]: Prepare'\n"
        "get_ipython().run_cell_magic('ollie', '', prompt)"
    )
    assert k.run(step_one).error is None  # the agent itself did step 1
    run = k.run("%ollie run --parallel 3", timeout=120)
    assert run.error is None, run.error
    rows = run.texts()[-1].splitlines()
    assert rows[0].startswith("plan 1: 4 steps done by sub-agents (")  # then its spend
    assert rows[1].split() == ["step", "title", "worker", "status", "tokens", "cost"]
    assert rows[2].split()[:3] == ["1", "Prepare", "done"]  # no worker: done by the agent
    assert rows[6].split()[3] == "done" and rows[6].split()[2].startswith("worker")
    status, log, tabs = k.run(PROBE).text().splitlines()
    assert "4 steps done" not in status and "4 steps done" not in log  # the table says it once
    assert tabs == "['worker1', 'worker2', 'worker3']"
    sent = int(k.run("print(len(requests))").text())
    usage = k.run("%ollie usage").text()
    assert usage.startswith(f"ℹ usage: {sent} requests, "), (usage, sent)
    assert sent == 2 + 2 + 4 * 2  # the plan, step 1 by the agent, four steps by workers
    status = k.run("%ollie status").text()
    assert f"{sent} requests" in status


def test_watch_off_takes_its_queued_steps_off_the_queue(kernel):
    k = kernel
    counting_model(k, 60)
    k.run(WIDE)
    assert k.run("%ollie watch on").error is None
    output_until(k, "print(ollie_nb.agent().core.is_running)", "True")  # a step has started
    off = k.run("%ollie watch off").text()
    assert off == "ℹ stopped watching task events; the 7 steps it had queued left the queue"
    assert k.run("%ollie queue").text() == "queue\n(the queue is empty)"
    assert k.run("%ollie watch off").text() == "ℹ stopped watching task events"


def test_plan_goal_words_finds_the_plan_by_its_goal(kernel):
    k = kernel
    counting_model(k, 0)
    k.run("%%ollie\nShip the docs\n- Write\n- Publish (after 1)")
    shown = k.run("%ollie plan Ship it")
    assert shown.error is None and "Ship it" in shown.text() and "Prepare" in shown.text()
    assert "Publish" in k.run("%ollie plan ship the DOCS").text()
    ambiguous = k.run("%ollie plan ship").stderr()
    assert ambiguous.strip().endswith(
        "plans match 'ship' (1: Ship it; 3: Ship the docs); give the plan's number"
    ), ambiguous
    missing = k.run("%ollie plan no such goal").stderr()
    assert "no plan 'no such goal'" in missing


def test_session_names_are_unique_and_an_early_name_is_kept(kernel):
    k = kernel
    assert k.run("%ollie clear").error is None
    early = k.run("%ollie rename alpha").text()
    assert early == "ℹ session named 'alpha'; it is saved with the first prompt"
    k.run("%ollie ask hello")
    first = k.run("print(ollie_nb.agent().core.session.session_id)").text().strip()
    k.run("%ollie clear")
    k.run("%ollie ask hi again")
    refused = k.run("%ollie rename alpha").stderr()
    assert f"a saved session is named 'alpha' already ({first}); choose another name" in refused
    assert k.run("%ollie rename beta").text() == "ℹ session named 'beta' and saved"
    resumed = k.run("%ollie resume alpha").text()
    assert resumed.startswith(f"ℹ resumed {first}: "), resumed


CHAIN_MODEL = """
import asyncio, ollie_nb
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt

async def chain(messages, tools):
    last = messages[-1]
    if last.role == 'user' and is_step_prompt(last.content) and 'Second' in last.content:
        await asyncio.sleep(60)  # in flight when Stop is clicked
    return demo_reply(messages, tools)

ollie_nb.agent().core.set_backend(OfflineBackend(chain))
"""


def test_the_watch_widgets_stop_button_hands_back_the_step_in_flight_only(kernel):
    """A click on Stop (a comm message, as the browser sends it): the turn in flight ends,
    its step is open again, the step already done stays done, nothing more starts."""
    k = kernel
    assert k.run(CHAIN_MODEL).error is None
    k.run("%%ollie\nTwo chores\n- First chore\n- Second chore (after 1)")
    buttons: list[str] = []

    def stop_button(kind, content):
        state = content.get("data", {}).get("state", {}) if kind == "comm_open" else {}
        if state.get("description") == "Stop":
            buttons.append(content["comm_id"])

    assert k.run("%ollie watch on", on_message=stop_button).error is None
    assert len(buttons) == 1
    db = k.base / "tasks.db"
    titles = {"First chore": "done", "Second chore": "in_progress"}

    def states() -> dict[str, str]:
        return {t: s for t, _, s in snapshot(db).tasks.values() if t in titles}

    wait_until(lambda: states() == titles, 60, "the second chore in progress")
    click = {"method": "custom", "content": {"event": "click"}}
    k.kc.shell_channel.send(k.kc.session.msg("comm_msg", {"comm_id": buttons[0], "data": click}))
    output_until(k, "print(ollie_nb.agent().core.watch.watcher is None)", "True", 20)
    handed_back = {"First chore": "done", "Second chore": "open"}
    wait_until(lambda: states() == handed_back, 20, "the second chore handed back")
    assert k.run("print(ollie_nb.agent().core.is_running)").text().strip() == "False"
    status = (
        k.run(
            "from ollie_nb.notebook._watch_widget import WatchView\nimport gc\n"
            "w = [o for o in gc.get_objects() if isinstance(o, WatchView)][-1]\n"
            "print(w.status.value, w.stop_button.disabled)"
        )
        .text()
        .strip()
    )
    assert "the watch is off" in status and status.endswith("True")
    time.sleep(1.0)  # nothing starts the step again once the watch is off
    assert states() == handed_back
