"""Planted bugs the suite must catch: apply each mutant to a copy of the tree, run its tests.

Each mutant is a small, realistic bug in one feature: a file, an exact snippet of it, the
snippet's replacement, and the tests that cover the behaviour. For every mutant this
script copies the tree (the files git knows, as they are in the working tree) into a
temporary directory, replaces the snippet there, runs the covering tests with that copy
first on PYTHONPATH, and reports the mutant as killed (a test failed) or as a survivor
(every test passed). A snippet that no longer occurs exactly once is reported as stale:
the list must follow the code.

    python scripts/mutants.py            # the whole list (before a release)
    python scripts/mutants.py --quick    # the CI subset
    python scripts/mutants.py --list     # ids, files and covering tests
    python scripts/mutants.py --jobs 2   # two mutants at once, each in a copy of its own
    python scripts/mutants.py ID ...     # only these mutants

Exit status 0 when every mutant run was killed, 1 when one survived or is stale.
Add a row with each feature or fix: the bug you planted by hand to see your test fail.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600.0  # s for one mutant's tests; a mutant that hangs them counts as killed


@dataclass(frozen=True)
class Mutant:
    """One planted bug: `original` (exactly once in `file`) becomes `mutated`."""

    id: str
    file: str
    original: str
    mutated: str
    tests: tuple[str, ...]
    what: str  # what a user would see go wrong
    quick: bool = False  # part of the CI subset (cheap tests, no kernels)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "worker-misses-lapsed-leases",
        "ollie_nb/core/_worker.py",
        "        return min(SIGNAL_CHECK, left if left > 0 else LEASE_RECHECK)",
        "        return SIGNAL_CHECK",
        (
            "tests/core/test_workers.py::test_a_waiting_worker_reads_the_store_when_a_claim_it_saw_runs_out",
        ),
        "a dead worker's step waits for another worker's 30 s safety read instead of its lease",
        quick=True,
    ),
    Mutant(
        "secret-check-quadratic-on-key-runs",
        "ollie_nb/redaction.py",
        '    runs_cut = _LONG_RUN.sub(" ", text)',
        "    runs_cut = text",
        (
            "tests/reliability/test_secret_sources.py::test_a_long_run_of_key_characters_is_read_once_not_from_every_start",
        ),
        "a long model-written argument of key-like characters hangs the kernel for half a minute",
    ),
    Mutant(
        "jwt-pattern-backtracks",
        "ollie_nb/redaction.py",
        'r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\\.eyJ[A-Za-z0-9_-]{8,}+\\.[A-Za-z0-9_-]*+"',
        'r"eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*"',
        (
            "tests/reliability/test_secret_sources.py::test_a_long_run_of_key_characters_is_read_once_not_from_every_start",
        ),
        "a long run of 'eyJ' in an argument hangs the kernel",
    ),
    Mutant(
        "url-scheme-read-from-every-letter",
        "ollie_nb/redaction.py",
        '_SCHEME = r"(?<![A-Za-z0-9+.-])[0-9+.-]*+(?P<url>[A-Za-z][A-Za-z0-9+.-]*+://"',
        '_SCHEME = r"(?P<url>[A-Za-z][A-Za-z0-9+.-]*://"',
        (
            "tests/reliability/test_secret_sources.py::test_a_hostile_text_of_100_000_characters_is_read_in_linear_time",
        ),
        "a step body of 'see x:// ' and 60,000 letters makes task_read take 26 s",
    ),
    Mutant(
        "url-query-tried-after-every-scheme",
        "ollie_nb/redaction.py",
        """(?:\\?(?P<query>[^\\s'\\"<>]*+))?")""",
        """\\?(?P<query>[^\\s'\\"<>]+)")""",
        (
            "tests/reliability/test_secret_sources.py::test_a_hostile_text_of_100_000_characters_is_read_in_linear_time",
        ),
        "a 50,000-character MCP result of 'a://' over and over blocks the kernel's loop for seconds",
    ),
    Mutant(
        "otlp-headers-not-secret",
        "ollie_nb/redaction.py",
        '    "HEADERS",\n',
        "",
        (
            "tests/reliability/test_secret_sources.py::test_otlp_headers_are_a_secret_and_the_session_id_is_not",
            "tests/tools/test_tools_environ.py::test_secret_names",
        ),
        "OTEL_EXPORTER_OTLP_HEADERS (an Authorization header) reaches executed code and shows whole",
        quick=True,
    ),
    Mutant(
        "authorization-credential-after-scheme-shown",
        "ollie_nb/redaction.py",
        """(?:(?i:bearer|basic|token|digest)\\s++)?[""",
        """[""",
        (
            "tests/reliability/test_redaction.py::test_an_authorization_header_hides_its_scheme_and_credential",
        ),
        "`Authorization: Bearer <token>` shows as `Authorization: *** <token>`",
        quick=True,
    ),
    Mutant(
        "python-exec-cut-before-redaction",
        "ollie_nb/tools/_pyexec.py",
        "REDACT_MARGIN = 256",
        "REDACT_MARGIN = 0",
        (
            "tests/reliability/test_redaction.py::test_python_exec_output_and_value_are_checked_as_python_vars_is",
        ),
        "a key printed across python_exec's output cap, or in a long value, shows its head",
        quick=True,
    ),
    Mutant(
        "python-exec-secret-named-value-shown",
        "ollie_nb/tools/_pyexec.py",
        "run.hidden = names_secret(last.value)",
        "run.hidden = False",
        (
            "tests/reliability/test_redaction.py::test_python_exec_output_and_value_are_checked_as_python_vars_is",
        ),
        "python_exec of `api_key` shows the value python_vars hides",
        quick=True,
    ),
    Mutant(
        "variable-reference-masked",
        "ollie_nb/redaction.py",
        "        and not _REFERENCE.fullmatch(value)\n",
        "",
        (
            "tests/reliability/test_redaction.py::test_an_authorization_header_hides_its_scheme_and_credential",
        ),
        'the hint `{"Authorization": "Bearer ${TOKEN}"}` shows as `"***"`',
        quick=True,
    ),
    Mutant(
        "arg-check-skips-keys",
        "ollie_nb/redaction.py",
        "                if secret:\n                    self.paths.append(here)\n",
        "",
        (
            "tests/reliability/test_secret_sources.py::test_a_secret_hidden_in_keys_invisible_characters_splits_or_encodings_asks",
        ),
        'a trusted tool gets {"data": {KEY: 1}} without asking',
        quick=True,
    ),
    Mutant(
        "arg-check-keeps-invisible-characters",
        "ollie_nb/redaction.py",
        '    return _INVISIBLE.sub("", text)',
        "    return text",
        (
            "tests/reliability/test_secret_sources.py::test_a_secret_hidden_in_keys_invisible_characters_splits_or_encodings_asks",
        ),
        "a key with a zero-width space in it reaches a trusted tool",
        quick=True,
    ),
    Mutant(
        "arg-check-values-not-joined",
        "ollie_nb/redaction.py",
        "        for group in (True, False):  # the keys joined, the values joined",
        "        for group in ():",
        (
            "tests/reliability/test_secret_sources.py::test_a_secret_hidden_in_keys_invisible_characters_splits_or_encodings_asks",
        ),
        "a key split over two values reaches a trusted tool",
        quick=True,
    ),
    Mutant(
        "arg-check-no-decoding",
        "ollie_nb/redaction.py",
        "    return _found_spans(text, known) + _encoded_spans(text, known)",
        "    return _found_spans(text, known)",
        (
            "tests/reliability/test_secret_sources.py::test_a_secret_hidden_in_keys_invisible_characters_splits_or_encodings_asks",
        ),
        "a base64- or hex-encoded key reaches a trusted tool",
        quick=True,
    ),
    Mutant(
        "arg-check-no-hex",
        "ollie_nb/redaction.py",
        "    tokens = [m for pattern in (_BASE64, _HEX) for m in pattern.finditer(text)]",
        "    tokens = [m for pattern in (_BASE64,) for m in pattern.finditer(text)]",
        (
            "tests/reliability/test_secret_sources.py::test_a_secret_hidden_in_keys_invisible_characters_splits_or_encodings_asks",
        ),
        "a hex-encoded key reaches a trusted tool",
        quick=True,
    ),
    Mutant(
        "arg-check-base64-tail-dropped",
        "ollie_nb/redaction.py",
        "            part = token[k : len(token) - int((len(token) - k) % 4 == 1)]  # 1 left: no byte",
        "            part = token[k : len(token) - (len(token) - k) % 4]",
        (
            "tests/reliability/test_secret_sources.py::test_a_secret_hidden_in_keys_invisible_characters_splits_or_encodings_asks",
        ),
        "a base64 key shifted by a character loses its end and reaches a trusted tool",
        quick=True,
    ),
    Mutant(
        "approver-sees-split-secret-parts",
        "ollie_nb/redaction.py",
        "        return _masked(text, spans), True",
        "        return _masked(text, _spans(text, self.known, True)), True",
        (
            "tests/reliability/test_secret_sources.py::test_a_secret_hidden_in_keys_invisible_characters_splits_or_encodings_asks",
        ),
        "the approval shows both halves of a key split over two values",
        quick=True,
    ),
    Mutant(
        "graph-without-step-numbers",
        "ollie_nb/planning/graph.py",
        '    return number if view.ids[i] == number else f"{number} · {view.ids[i]}"',
        "    return view.ids[i]",
        ("tests/planning/test_plan_graph.py::test_ids_and_goal_id_are_shown",),
        "a task-server plan's graph names its steps by task id only, not the numbers the commands use",
    ),
    Mutant(
        "plan-held-not-held",
        "ollie_nb/tools/_reasoning.py",
        "if self.hold_plans():",
        "if False:",
        (
            "tests/core/test_plan_review.py::test_a_held_plan_saves_nothing_until_approved_with_the_users_edits",
        ),
        "with review on, a plan is saved and worked before the user saw it",
        quick=True,
    ),
    Mutant(
        "approval-without-edits",
        "ollie_nb/core/_plans.py",
        "approval_prompt(record, draft.edits())",
        "approval_prompt(record, [])",
        (
            "tests/core/test_plan_review.py::test_a_held_plan_saves_nothing_until_approved_with_the_users_edits",
        ),
        "the model is not told what the user changed in its plan",
        quick=True,
    ),
    Mutant(
        "discard-untold",
        "ollie_nb/core/_plans.py",
        "self._prompts.note(discard_note(number))",
        "pass",
        (
            "tests/core/test_plan_review.py::test_discard_leaves_nothing_and_tells_the_model_at_its_next_turn",
        ),
        "the model goes on as if its discarded plan stood",
        quick=True,
    ),
    Mutant(
        "held-draft-lost-on-resume",
        "ollie_nb/core/_sessions.py",
        'drafts=drafts_from_dict(data.get("drafts") or {}),',
        "drafts={},",
        (
            "tests/core/test_plan_review.py::test_a_held_plan_and_its_draft_come_back_with_the_session",
        ),
        "a resumed session loses the user's edits of a held plan",
        quick=True,
    ),
    Mutant(
        "held-plan-title-unescaped",
        "ollie_nb/notebook/_plans.py",
        'f"<b>{esc(self.title())}</b>',
        'f"<b>{self.title()}</b>',
        (
            "tests/notebook/test_plan_review_views.py::test_a_held_plan_and_a_saved_one_escape_their_titles_and_goal",
        ),
        "a model-written goal injects HTML into the held plan's view",
        quick=True,
    ),
    Mutant(
        "editor-approves-a-cycle",
        "ollie_nb/notebook/_plan_editor.py",
        "self.buttons[ok].disabled = self.closed or bool(problems)",
        "self.buttons[ok].disabled = self.closed",
        (
            "tests/notebook/test_plan_editor.py::test_a_cycle_disables_approve_with_the_message_and_a_click_sends_nothing",
        ),
        "Approve stays clickable on a plan with a cycle",
        quick=True,
    ),
    Mutant(
        "editor-text-unescaped",
        "ollie_nb/notebook/_plan_editor.py",
        'return f"<pre>{esc(self.draft.text())}</pre>"',
        'return f"<pre>{self.draft.text()}</pre>"',
        ("tests/notebook/test_plan_editor.py::test_the_text_fallback_of_the_graph_escapes_too",),
        "a model-written title injects HTML into the editor's text graph",
        quick=True,
    ),
    Mutant(
        "editor-approves-the-unedited-plan",
        "ollie_nb/notebook/_plan_editor.py",
        "approve=lambda d: _on_loop(runtime, lambda: core().plans.approve(number, d))",
        "approve=lambda d: _on_loop(runtime, lambda: core().plans.approve(number))",
        (
            "tests/notebook/test_plan_editor_kernel.py::test_edits_and_approve_sent_as_comm_messages_save_the_edited_plan",
        ),
        "Approve in the editor saves the model's plan, not the user's edits",
    ),
    Mutant(
        "editor-misses-a-decision-from-code",
        "ollie_nb/core/_plans.py",
        "        self._saved()  # a resumed session finds the plan as the user left it\n"
        "        self._decided(record)",
        "        self._saved()  # a resumed session finds the plan as the user left it",
        (
            "tests/notebook/test_plan_editor_follows.py::test_an_approval_from_code_shows_in_every_editor_of_the_plan",
        ),
        "an editor still says 'waiting for your review' with Approve on after approve_plan",
        quick=True,
    ),
    Mutant(
        "editor-stale-click-says-saving-failed",
        "ollie_nb/notebook/_plan_editor.py",
        "if isinstance(error, PlanDecidedError):",
        "if False:",
        (
            "tests/notebook/test_plan_editor_follows.py::test_a_stale_button_ends_with_the_decision_not_a_saving_error",
        ),
        "Approve on a plan approved elsewhere gives red 'saving failed: ... approved already'",
        quick=True,
    ),
    Mutant(
        "editor-misses-a-decision-made-before-it-listened",
        "ollie_nb/notebook/_plan_editor.py",
        "if record is not None and record.review is not None and not record.held:",
        "if False:",
        (
            "tests/notebook/test_plan_editor_follows.py::test_an_editor_made_after_the_decision_shows_it_at_once",
        ),
        "an editor shown as the plan is discarded stays open for review",
        quick=True,
    ),
    Mutant(
        "editor-decision-news-lost-on-the-loop",
        "ollie_nb/notebook/_plan_editor.py",
        "                runtime.on_main(lambda: show(event.record))",
        "                pass",
        (
            "tests/notebook/test_plan_editor_follows_kernel.py::test_an_editor_follows_a_discard_made_with_the_command",
            "tests/notebook/test_plan_editor_follows_kernel.py::test_an_editor_follows_an_approval_made_from_code",
        ),
        "after %ollie plan discard the editor above still offers Approve",
    ),
    Mutant(
        "held-plan-reply-speaks-to-the-model",
        "ollie_nb/llm/_offline.py",
        "    held = read_held(status)",
        "    held = None",
        (
            "tests/notebook/test_review_wording.py::test_a_held_plan_is_told_to_the_user_in_the_users_words",
        ),
        "the reply tells the user 'Stop here and wait: do not start on the steps'",
        quick=True,
    ),
    Mutant(
        "queued-plan-reply-speaks-to-the-model",
        "ollie_nb/llm/_offline.py",
        "    queued = read_queued(status)",
        "    queued = None",
        (
            "tests/notebook/test_review_wording.py::test_a_queued_plan_is_told_to_the_user_in_the_users_words",
        ),
        "the reply tells the user 'Stop here — do not execute the steps now'",
        quick=True,
    ),
    Mutant(
        "held-plan-editor-above-the-reply",
        "ollie_nb/notebook/_render.py",
        "            self._held.append(self._held_view(record))",
        "            self._show(self._held_view(record))",
        (
            "tests/notebook/test_review_wording.py::test_a_held_plans_editor_is_shown_under_the_reply",
        ),
        "the approval's turn prints above the old 'waiting for your review' reply",
        quick=True,
    ),
    Mutant(
        "plan-full-still-collapsed",
        "ollie_nb/notebook/_plans.py",
        "            expand=self.expand,\n",
        "",
        (
            "tests/notebook/test_plan_editor_follows_kernel.py::test_plan_full_draws_every_step_of_a_plan_drawn_collapsed",
        ),
        "%ollie plan N --full draws a 501-step plan collapsed all the same",
    ),
    Mutant(
        "long-chain-not-top-to-bottom",
        "ollie_nb/planning/graph.py",
        "deep = len(layers) >= LONG_CHAIN and",
        "deep = len(layers) > LONG_CHAIN and",
        (
            "tests/planning/test_readable_rankdir.py::test_a_long_chain_is_drawn_top_to_bottom_and_a_short_or_wide_plan_as_asked",
        ),
        "a 4-step chain in the editor is drawn left to right, its labels shrunk",
        quick=True,
    ),
    Mutant(
        "editor-graph-squeezed-left-to-right",
        "ollie_nb/notebook/_plan_editor.py",
        "rankdir = readable_rankdir(steps, self.rankdir)  # a long chain: top to bottom",
        "rankdir = self.rankdir",
        (
            "tests/browser/test_browser_editor_graph.py::test_a_long_chain_in_the_editor_has_readable_labels_and_whole_titles",
        ),
        "a 5-step chain in the editor at 1280 px has labels under 10 px tall",
    ),
    Mutant(
        "draft-delete-loses-order",
        "ollie_nb/planning/_draft.py",
        "inherited = [k for k in row.after if k != gone.key] + list(gone.after)",
        "inherited = [k for k in row.after if k != gone.key]",
        ("tests/planning/test_plan_draft.py::test_deleting_a_step_keeps_the_order_it_stood_for",),
        "deleting a middle step lets its dependents start before what it waited for",
        quick=True,
    ),
    Mutant(
        "draft-cycle-unseen",
        "ollie_nb/planning/_draft.py",
        "        cycle = self._cycle()\n        if cycle:",
        "        cycle = []\n        if cycle:",
        (
            "tests/planning/test_plan_draft.py::test_a_cycle_is_named_by_step_numbers_and_blocks_saving",
        ),
        "an edited plan with a cycle is not named as one",
        quick=True,
    ),
    Mutant(
        "request-sent-past-the-cap",
        "ollie_nb/core/_budget.py",
        "        self.check()\n",
        "",
        ("tests/core/test_budgets.py::test_a_request_past_the_session_cost_cap_is_not_sent",),
        "a request past the session's cost cap is sent and paid for",
        quick=True,
    ),
    Mutant(
        "compaction-around-the-model-gateway",
        "ollie_nb/core/_turn.py",
        "return send_request(context, self.state, messages, params(context.config))",
        "return context.backend.chat_stream(messages, (), params(context.config))",
        (
            "tests/core/test_model_gateway.py::test_a_compaction_is_counted_in_the_session_spend",
            "tests/core/test_model_gateway.py::test_ollie_compact_at_a_reached_cap_is_refused_and_keeps_the_history",
            "tests/core/test_model_gateway.py::test_the_automatic_compaction_at_a_reached_cap_is_not_sent",
            "tests/meta/test_model_gateway_only.py",
        ),
        "%ollie compact sends its request past the session's cap, and its tokens are never counted",
        quick=True,
    ),
    Mutant(
        "run-stopped-by-requests-in-flight",
        "ollie_nb/core/_budget.py",
        "return self._first_reached(in_flight=False)",
        "return self._first_reached(in_flight=True)",
        (
            "tests/core/test_model_gateway.py::test_a_reservation_holds_its_estimate_on_the_chain_until_released",
        ),
        "a parallel run stops and hands its steps back before its workers have spent anything",
        quick=True,
    ),
    Mutant(
        "requests-in-flight-not-held",
        "ollie_nb/core/_budget.py",
        "ledger.in_flight = ledger.in_flight + estimate",
        "ledger.in_flight = ledger.in_flight",
        (
            "tests/core/test_model_gateway.py::test_four_children_spawned_at_once_end_within_the_cap_plus_one_request",
            "tests/core/test_model_gateway.py::test_a_reservation_holds_its_estimate_on_the_chain_until_released",
            "tests/core/test_model_gateway.py::test_a_plan_run_cap_holds_off_the_workers_that_would_start_together",
            "tests/core/test_model_gateway.py::test_a_request_is_refused_exactly_when_spend_and_requests_in_flight_reach_the_cap",
        ),
        "four sub-agents spawned at once (or a run's workers) all pass a cap before any has spent",
        quick=True,
    ),
    Mutant(
        "cap-reached-only-past-it",
        "ollie_nb/core/_budget.py",
        "if self.tokens is not None and spend.tokens >= self.tokens:",
        "if self.tokens is not None and spend.tokens > self.tokens:",
        (
            "tests/core/test_budgets.py::test_a_cap_is_reached_at_the_spend_not_only_past_it",
            "tests/core/test_model_gateway.py::test_a_request_is_refused_exactly_when_spend_and_requests_in_flight_reach_the_cap",
        ),
        "a token cap lets one more request through at the cap",
        quick=True,
    ),
    Mutant(
        "cache-reads-unpriced",
        "ollie_nb/llm/_prices.py",
        "cache_read_tokens=usage.cache_read_tokens,",
        "",
        (
            "tests/notebook/test_costs.py::test_cost_of_priced_models_and_no_price_for_an_unknown_one",
        ),
        "prompt-cache reads are priced as fresh input (or not at all)",
    ),
    Mutant(
        "subagent-cap-ignored",
        "ollie_nb/core/_parallel_run.py",
        "if child is not None and child.capped and not state.is_finished:",
        "if False:",
        (
            "tests/core/test_budget_runs.py::test_a_sub_agent_cap_stops_one_worker_while_the_others_finish",
        ),
        "a sub-agent stopped by its cap leaves its step claimed",
        quick=True,
    ),
    Mutant(
        "graph-without-spend",
        "ollie_nb/planning/graph.py",
        'lines.append(f"{spent.tokens:,} tokens · {spent.cost_text}")',
        "pass",
        ("tests/planning/test_plan_graph_spend.py",),
        "the graph no longer shows what each step cost",
        quick=True,
    ),
    Mutant(
        "traced-content-unredacted",
        "ollie_nb/core/_tracing.py",
        '"content": redact(message.content)',
        '"content": message.content',
        (
            "tests/core/test_tracing.py::test_message_contents_are_recorded_only_when_asked_and_then_redacted",
        ),
        "a captured message sends an API key to the trace store",
        quick=True,
    ),
    Mutant(
        "subagent-turns-outside-their-step",
        "ollie_nb/core/_parallel_run.py",
        "with span.current():  # the child's turns nest under the step's span",
        "with contextlib.nullcontext():",
        (
            "tests/core/test_tracing.py::test_a_parallel_run_nests_each_step_and_its_sub_agent_turn_under_the_run",
        ),
        "a sub-agent's turns are traces of their own, not under their step",
        quick=True,
    ),
    Mutant(
        "no-chat-span",
        "ollie_nb/core/_model_gateway.py",
        "stream = tracing().chat(context, state.session_id, messages, sent)",
        "stream = sent",
        (
            "tests/core/test_tracing.py::test_a_turn_holds_its_model_requests_and_tool_calls_and_the_plan_span_names_the_tasks",
        ),
        "traces show no model requests, their tokens or models",
        quick=True,
    ),
    Mutant(
        "trace-goal-id-wrong",
        "ollie_nb/core/_tracing.py",
        "span.set_attribute(GOAL_ID, record.goal_id)",
        "span.set_attribute(GOAL_ID, record.ids[0])",
        (
            "tests/core/test_trace_store.py::test_a_plan_turn_and_its_steps_read_back_from_an_mlflow_server",
        ),
        "a plan's trace does not join to its goal row in the task store",
    ),
    Mutant(
        "worker-prompt-without-body",
        "ollie_nb/core/_worker.py",
        'PlanStep(s.title, s.body or "",',
        'PlanStep(s.title, "",',
        ("tests/core/test_workers.py::test_a_worker_prompt_carries_the_goal_and_the_step_body",),
        "a headless worker's model sees a step's title only, not what it should do",
    ),
    Mutant(
        "worker-ignores-next-cursor",
        "ollie_nb/planning/_client.py",
        "            cursor = listing_next(result.text)\n            if not cursor:\n                break\n            result = await self._call(TASK_LIST, {**asked",
        '            cursor = ""\n            if not cursor:\n                break\n            result = await self._call(TASK_LIST, {**asked',
        (
            "tests/core/test_workers.py::test_a_worker_finishes_a_plan_behind_a_full_page_of_other_tasks",
        ),
        "a worker says idle while a plan listed after a full page of other tasks waits unworked",
    ),
    Mutant(
        "task-call-around-the-gateway",
        "ollie_nb/core/_worker.py",
        "tasks = await self.client.tasks()",
        'tasks = await self.client._call("task_list", {})',
        (
            "tests/meta/test_task_gateway.py::test_no_code_outside_the_gateway_names_or_calls_a_task_tool",
        ),
        "a task tool called around TaskClient skips its rules (pages, caps, typed answers)",
        quick=True,
    ),
    Mutant(
        "worker-polls-instead-of-signal",
        "ollie_nb/core/_worker.py",
        "updates = self._updates()",
        "updates = None",
        (
            "tests/core/test_workers.py::test_a_waiting_worker_starts_a_new_step_on_the_change_signal_without_polling",
        ),
        "an idle worker polls the store's event log four times a second",
    ),
    Mutant(
        "lease-expiry-unrecorded",
        "ollie_nb/tasks/_store.py",
        'self._event(conn, now, "lease_expired", task_id, payload)',
        "pass",
        (
            "tests/notebook/test_kernel_restart.py::test_a_run_killed_with_its_kernel_is_resumed_and_finished_with_no_step_worked_twice",
        ),
        "a step reclaimed from a dead kernel has no lease_expired event naming it",
    ),
    Mutant(
        "spread-run-same-order",
        "ollie_nb/core/_parallel_run.py",
        "self._order.shuffle(spread)",
        "pass",
        (
            "tests/core/test_parallel_reads.py::test_a_spread_run_takes_the_ready_steps_in_an_order_of_its_own",
        ),
        "workers sharing a store all race for the same next step",
        quick=True,
    ),
    Mutant(
        "run-rereads-every-step",
        "ollie_nb/planning/_client.py",
        "self._by_ids = True",
        "self._by_ids = False",
        (
            "tests/core/test_parallel_reads.py::test_a_run_reads_its_plan_when_its_view_runs_out_not_after_every_step",
            "tests/core/test_claim_next_runs.py::test_one_steps_state_is_one_listing_of_its_id",
        ),
        "a parallel run reads the whole plan after every step",
        quick=True,
    ),
    Mutant(
        "watch-stop-button-does-nothing",
        "ollie_nb/notebook/_watch_widget.py",
        "        self.runtime.submit(lambda: self.runtime.core.watch.stop())",
        "        pass",
        (
            "tests/notebook/test_collisions.py::test_the_watch_widgets_stop_button_hands_back_the_step_in_flight_only",
        ),
        "the watch widget's Stop button says stopping, and the agent goes on working steps",
    ),
    Mutant(
        "python-exec-value-not-shown",
        "ollie_nb/notebook/_render.py",
        "        for value in event.shown:  # what the call made for the user: under its line",
        "        for value in ():",
        (
            "tests/notebook/test_tools.py::test_the_value_python_exec_shows_comes_under_the_calls_line",
        ),
        "the data frame python_exec made never shows in the cell",
    ),
    Mutant(
        "handled-turn-error-still-retried",
        "ollie_nb/llm/_retry.py",
        "            if hook is not None and await hook(err):",
        "            if hook is not None and False:",
        (
            "tests/core/test_tool_hooks.py::test_a_turn_error_hook_that_handles_the_first_error_skips_the_retries",
        ),
        "a turnError hook that switched the model is followed by three more requests to the limited one",
        quick=True,
    ),
    Mutant(
        "turn-error-hook-asked-twice",
        "ollie_nb/core/_turn.py",
        "                if said is None:  # the hooks were not asked before a retry: ask them now",
        "                if True:",
        (
            "tests/core/test_tool_hooks.py::test_a_turn_error_hook_that_does_not_handle_it_is_asked_once_and_retries_go_on",
        ),
        "a turnError hook runs twice for one failed request",
        quick=True,
    ),
    Mutant(
        "hook-without-ollie-variables",
        "ollie_nb/core/_hooks.py",
        "    return {**env, **named}",
        "    return {**env}",
        ("tests/core/test_tool_hooks.py::test_hook_commands_get_the_payload_as_ollie_variables",),
        "a hook command reading $OLLIE_SESSION_ID or $OLLIE_TOOL, as ollie's hooks do, finds nothing",
    ),
    Mutant(
        "compaction-quotes-old-summary",
        "ollie_nb/core/_compact.py",
        'if message.role != "user" or message.content.startswith(SUMMARY_HEAD):',
        'if message.role != "user":',
        (
            "tests/core/test_compaction.py::test_a_second_compaction_keeps_one_summary_and_never_quotes_the_first_as_the_users",
        ),
        "a second compaction quotes the first summary as one of the user's messages",
        quick=True,
    ),
    Mutant(
        "watch-step-worked-without-its-claim",
        "ollie_nb/core/_watch.py",
        "        if not claim.taken:\n",
        "        if False:\n",
        (
            "tests/core/test_collisions.py::test_watch_on_then_parallel_3_on_a_diamond_each_step_is_worked_once",
            "tests/core/test_claim_leases.py::test_a_watch_step_another_claimer_took_first_is_not_worked_here",
        ),
        "with the watch on, the agent works a step a sub-agent of a parallel run also works",
    ),
    Mutant(
        "any-task-tool-trusted",
        "ollie_nb/core/_routing.py",
        "            if server == self.task_server and tool in TASK_TOOLS:",
        '            if tool.startswith("task_"):',
        (
            "tests/reliability/test_trust.py::test_a_task_tool_of_a_server_that_is_not_the_task_server_asks_first",
        ),
        "a task_* tool of a server that is not the wired task server runs without asking",
        quick=True,
    ),
    Mutant(
        "child-gate-without-approver",
        "ollie_nb/core/_context.py",
        "            router=child_router(self.router),\n",
        "            router=child_router(self.router),\n"
        "            gate=replace(self.gate, approve=None),\n",
        (
            "tests/core/test_subagents.py::test_a_childs_tool_outside_trusted_tools_asks_the_parents_approver",
        ),
        "a sub-agent never asks the user: a tool outside trustedTools is silently denied",
        quick=True,
    ),
    Mutant(
        "child-gate-allows-everything",
        "ollie_nb/core/_context.py",
        "            router=child_router(self.router),\n",
        "            router=child_router(self.router),\n"
        '            gate=replace(self.gate, trusted=("*",)),\n',
        (
            "tests/core/test_subagents.py::test_a_childs_tool_outside_trusted_tools_asks_the_parents_approver",
        ),
        "a sub-agent runs a tool outside trustedTools without asking",
        quick=True,
    ),
    Mutant(
        "approval-unanswered-allows",
        "ollie_nb/notebook/_approval.py",
        "        except asyncio.TimeoutError:\n            answer = DENY\n",
        "        except asyncio.TimeoutError:\n            answer = ONCE\n",
        (
            "tests/notebook/test_approval_timeouts.py::test_a_request_the_kernel_thread_never_takes_is_denied_after_the_timeout",
            "tests/notebook/test_approval_timeouts.py::test_a_widget_nobody_answers_is_denied_after_the_timeout",
        ),
        "an approval nobody answers (a widget never shown) runs the tool",
        quick=True,
    ),
    Mutant(
        "approval-widget-timeout-allows",
        "ollie_nb/notebook/_approval.py",
        'lambda: widget.decide(DENY, "no answer in time")',
        'lambda: widget.decide(ONCE, "no answer in time")',
        (
            "tests/notebook/test_approval.py::test_a_background_approval_nobody_answers_is_denied_when_its_time_is_up",
        ),
        "a background approval widget nobody answers allows the call when its time is up",
        quick=True,
    ),
    Mutant(
        "typed-approval-defaults-to-yes",
        "ollie_nb/notebook/_approval.py",
        'answer = ONCE if choice in ("o", "once", "y", "yes") else DENY',
        'answer = DENY if choice in ("n", "no") else ONCE',
        (
            "tests/notebook/test_approval.py::test_enter_or_a_stray_answer_at_the_typed_prompt_denies",
        ),
        "at the typed approval prompt, Enter or a stray answer allows the call",
        quick=True,
    ),
    Mutant(
        "bearer-prefix-accepted",
        "ollie_nb/tasks/_http.py",
        "            if hmac.compare_digest(given, expected):",
        "            if given.startswith(expected):",
        ("tests/tasks/test_tasks_mcp.py::test_the_http_guard_lets_in_exactly_the_token",),
        "ollie-tasks --http accepts `Authorization: Bearer <token>anything-appended`",
        quick=True,
    ),
    Mutant(
        "waker-goes-on-after-stop",
        "ollie_nb/core/_wake.py",
        "if result.error or result.interrupted:",
        "if result.error:",
        (
            "tests/core/test_task_events.py::test_after_stop_of_a_turn_the_watch_started_the_next_step_waits",
        ),
        "after %ollie stop of a turn the watch started, the agent starts the next step by itself",
        quick=True,
    ),
    Mutant(
        "watch-reads-one-page",
        "ollie_nb/core/_event_reader.py",
        "                page, more = await self._fetch()\n                events.extend(page)\n",
        "                page, more = await self._fetch()\n                events.extend(page)\n                more = False\n",
        (
            "tests/core/test_task_events.py::test_more_than_a_page_of_events_in_one_change_are_all_read",
        ),
        "more than a page of events in one change: the rest (unblocked included) sit unread",
    ),
    Mutant(
        "session-id-checked-at-its-start-only",
        "ollie_nb/core/_sessions.py",
        "_SESSION_ID.fullmatch(session_id) is not None",
        "_SESSION_ID.match(session_id) is not None",
        (
            "tests/reliability/test_session_files.py::test_a_session_file_whose_id_points_outside_is_refused_on_load",
        ),
        "a session file whose id is `x/../../victim` loads, and every later save of it fails",
        quick=True,
    ),
    Mutant(
        "parallel-without-n-is-sequential",
        "ollie_nb/notebook/commands/plans.py",
        '"--parallel", nargs="?", type=at_least_one, const=0, default=None, metavar="N"',
        '"--parallel", nargs="?", type=at_least_one, const=None, default=None, metavar="N"',
        (
            "tests/notebook/test_parallel.py::test_parallel_without_n_runs_the_agents_max_parallel_at_once",
        ),
        "%ollie run --parallel without N works the queue one step at a time",
    ),
    Mutant(
        "parallel-width-ignores-max-parallel",
        "ollie_nb/core/_core.py",
        "width=lambda: self.max_parallel or self.subagents.limit,",
        "width=lambda: self.max_parallel or 4,",
        (
            "tests/notebook/test_parallel.py::test_parallel_without_n_runs_the_agents_max_parallel_at_once",
        ),
        "%ollie run --parallel without N runs four at once, not the agent's maxParallel",
    ),
    Mutant(
        "start-warnings-unredacted",
        "ollie_nb/core/_build_servers.py",
        "    servers.messages[:] = [redact(m) for m in servers.messages]\n",
        "",
        (
            "tests/notebook/test_start_warnings.py::test_at_the_start_the_hook_warning_is_redacted",
            "tests/notebook/test_start_warnings.py::test_ollie_agent_and_mcp_show_the_hook_warning_redacted",
        ),
        "a failing agentSpawn hook's warning (API key included) is shown unredacted at the start",
        quick=True,
    ),
    Mutant(
        "postgres-writes-unlocked",
        "ollie_nb/tasks/_postgres.py",
        'raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))',
        "pass",
        (
            "tests/tasks/test_tasks_concurrency.py::test_a_reader_following_events_by_cursor_sees_every_event_once[postgresql]",
        ),
        "on PostgreSQL a reader following events by cursor misses events (the watch misses unblocked)",
    ),
    Mutant(
        "output-cap-per-write",
        "ollie_nb/tools/_pyexec.py",
        "room = self.cap + REDACT_MARGIN - self.kept",
        "room = self.cap + REDACT_MARGIN",
        (
            "tests/tools/test_notebook_tools.py::test_many_small_prints_stay_capped_for_the_whole_run",
        ),
        "python_exec's output cap applies to each write: a loop of prints fills the context",
        quick=True,
    ),
    Mutant(
        "allow-once-remembered",
        "ollie_nb/notebook/_approval.py",
        "        if answer == SESSION and not request.secret_paths:\n",
        "        if answer in (ONCE, SESSION) and not request.secret_paths:\n",
        (
            "tests/notebook/test_approval.py::test_allow_once_allows_that_call_only_and_the_next_one_asks_again",
        ),
        "allow once is remembered: the next call of that tool runs without asking",
        quick=True,
    ),
    # typed events
    Mutant(
        "render-interrupted-by-its-text",
        "ollie_nb/notebook/_render.py",
        "if event.interrupted:",
        'if event.reply == "interrupted":',
        ("tests/notebook/test_render.py::test_the_event_type_decides_not_its_text",),
        "a stopped turn is drawn as done, and a reply reading 'interrupted' as stopped",
        quick=True,
    ),
    Mutant(
        "render-plan-warning-from-the-record",
        "ollie_nb/notebook/_render.py",
        'self._show(NoticeView(event.warning, "warning"))',
        'self._show(NoticeView(record.warning, "warning"))',
        (
            "tests/notebook/test_render.py::test_a_plan_warning_is_a_warning_notice_and_usage_makes_the_footer",
        ),
        "a plan's warning is not shown (or the cell fails) when a plan is drawn",
        quick=True,
    ),
    Mutant(
        "turn-ended-forgets-interrupted",
        "ollie_nb/core/_events.py",
        "    def interrupted(self) -> bool:\n        return self.result.interrupted\n",
        "    def interrupted(self) -> bool:\n        return False\n",
        ("tests/core/test_core_events.py::test_turn_ended_tells_what_the_turn_result_says",),
        "a turn stopped with %ollie stop is reported as a turn that finished",
        quick=True,
    ),
    Mutant(
        "reopened-step-has-no-notice-kind",
        "ollie_nb/core/_events.py",
        "(cls.DONE, cls.CANCELLED, cls.FAILED, cls.REOPENED)",
        "(cls.DONE, cls.CANCELLED, cls.FAILED)",
        ("tests/core/test_core_events.py::test_a_settled_step_status_becomes_its_notice_kind",),
        "a step another client reopens shows no notice",
        quick=True,
    ),
    Mutant(
        "watch-wakes-on-stopped-not-finished",
        "ollie_nb/notebook/_watch_widget.py",
        "if notice.what is WatchWhat.FINISHED and notice.record is not None:",
        "if notice.what is WatchWhat.STOPPED and notice.record is not None:",
        (
            "tests/notebook/test_frontend.py::test_watch_wakes_the_agent_when_another_client_finishes_a_step",
        ),
        "with the watch on, a step another client finishes does not wake the agent",
    ),
    Mutant(
        "core-delta-defined-again",
        "ollie_nb/core/_events.py",
        "from ollie_nb.llm import TextDelta as TextDelta\n",
        "from ollie_nb.llm import TextDelta as _ModelText\n\n\n@dataclass(frozen=True)\nclass TextDelta:\n    text: str\n",
        (
            "tests/core/test_core_events.py::test_the_core_passes_on_the_models_deltas_as_one_class_each",
        ),
        "a script matching llm.TextDelta sees no reply text among the core's events",
        quick=True,
    ),
    # a server's state
    Mutant(
        "built-in-servers-not-up",
        "ollie_nb/core/_tool_servers.py",
        "return self in (ServerState.CONNECTED, ServerState.BUILT_IN)",
        "return self is ServerState.CONNECTED",
        ("tests/core/test_server_states.py",),
        "%ollie status leaves the built-in servers (reasoning, execute, ...) out of its servers line",
        quick=True,
    ),
    Mutant(
        "built-in-transport-blank",
        "ollie_nb/core/_tool_servers.py",
        'transport=status.transport or (str(built_in) if status.state is built_in else ""),',
        "transport=status.transport,",
        ("tests/core/test_server_states.py",),
        "%ollie mcp shows '-' as a built-in server's transport",
        quick=True,
    ),
    # step states and queue items
    Mutant(
        "closed-is-not-done",
        "ollie_nb/planning/_state.py",
        '"done", "closed", "completed"',
        '"done", "completed"',
        ("tests/core/test_step_words.py::test_read_state_knows_the_words_task_servers_use",),
        "on a task server saying 'closed', a finished step is shown as unknown and never done",
        quick=True,
    ),
    Mutant(
        "run-starts-after-a-skipped-blocker",
        "ollie_nb/core/_parallel_run.py",
        "return statuses.get(ids[j], unknown).unblocks and ids[j] not in working",
        "return statuses.get(ids[j], unknown).is_closed and ids[j] not in working",
        (
            "tests/core/test_parallel_plans.py::test_a_queue_plan_never_starts_a_step_whose_blocker_failed_or_was_skipped",
        ),
        "a parallel run starts a step whose blocker failed or was skipped",
        quick=True,
    ),
    Mutant(
        "skipped-blocker-unblocks",
        "ollie_nb/planning/_state.py",
        "        return self is StepState.DONE\n",
        "        return self.is_finished\n",
        (
            "tests/core/test_parallel_plans.py::test_a_queue_plan_never_starts_a_step_whose_blocker_failed_or_was_skipped",
            "tests/core/test_task_events.py::test_the_watch_never_queues_a_step_whose_blocker_was_skipped",
        ),
        "a step whose blocker was cancelled (skipped) is started as if the blocker were done",
    ),
    Mutant(
        "watch-queues-after-a-closed-blocker",
        "ollie_nb/core/_react.py",
        "statuses.get(record.ids[j], unknown).unblocks",
        "statuses.get(record.ids[j], unknown).is_closed",
        (
            "tests/core/test_task_events.py::test_the_watch_never_queues_a_step_whose_blocker_was_skipped",
        ),
        "the watch queues a step whose blocker failed or was skipped",
    ),
    Mutant(
        "state-words-case-sensitive",
        "ollie_nb/planning/_state.py",
        'return re.sub(r"[\\s-]+", "_", word.strip().lower())',
        'return re.sub(r"[ -]+", "_", word.strip())',
        (
            "tests/core/test_step_words.py::test_a_state_word_reads_the_same_in_any_case_and_spacing",
        ),
        "a server saying 'Done' or 'in\tprogress' has its steps shown as unknown",
        quick=True,
    ),
    Mutant(
        "store-word-cancelled-unread",
        "ollie_nb/planning/_state.py",
        '    StepState.CANCELLED: (\n        "cancelled",\n',
        "    StepState.CANCELLED: (\n",
        (
            "tests/core/test_step_words.py::test_the_store_and_the_tasks_command_speak_words_the_agent_reads_as_themselves",
        ),
        "a step ollie-tasks says is cancelled reads as unknown: a run waits on it for ever",
        quick=True,
    ),
    Mutant(
        "queue-item-marks-the-newest-plan",
        "ollie_nb/planning/_book.py",
        "self.mark_queue_step(step.plan, step.step_id, state)",
        "self.mark_queue_step(max(self._queue_states, default=-1), step.step_id, state)",
        (
            "tests/core/test_queue_items.py::test_two_queue_plans_in_the_queue_are_each_marked_by_their_own_items",
        ),
        "with two queue plans queued, working the first marks the steps of the second",
    ),
    Mutant(
        "interrupted-queue-step-is-done",
        "ollie_nb/core/_turn_driver.py",
        "            self.plans.book.mark(step, StepState.OPEN)",
        "            self.plans.book.mark(step, StepState.DONE)",
        ("tests/core/test_queue_items.py::test_a_queue_plan_step_interrupted_goes_back_to_open",),
        "a queue plan's step stopped with %ollie stop is marked done",
    ),
    Mutant(
        "claim-writes-claimed",
        "ollie_nb/planning/_client.py",
        'status="in_progress"',
        'status="claimed"',
        (
            "tests/core/test_step_words.py::test_a_parallel_run_on_a_server_saying_pending_in_progress_closed",
        ),
        "on a task server without an atomic claim, a claimed step is written in a word it does not know",
    ),
    Mutant(
        "failed-child-step-left-in-progress",
        "ollie_nb/core/_parallel_run.py",
        "if not state.is_finished and step_id not in self._lost:",
        "if state is StepState.UNKNOWN and step_id not in self._lost:",
        (
            "tests/core/test_parallel_plans.py::test_a_failing_child_marks_its_step_failed_the_others_finish_and_nothing_is_orphaned",
        ),
        "a sub-agent that fails leaves its step in progress (orphaned) instead of failed",
    ),
    Mutant(
        "server-words-kept-unread",
        "ollie_nb/planning/_backends.py",
        "return {step_id: read_state(word) for step_id, word in words.items()}",
        "return dict(words)",
        (
            "tests/core/test_step_words.py::test_a_parallel_run_on_a_server_saying_pending_in_progress_closed",
        ),
        "a server's own words (pending, closed) reach the parallel run and %ollie plans unread",
    ),
    Mutant(
        "graph-unblocks-after-a-failed-step",
        "ollie_nb/planning/graph.py",
        "not all(given[a].unblocks for a in steps[i].after)",
        "not all(given[a].is_closed for a in steps[i].after)",
        (
            "tests/planning/test_plan_graph.py::test_a_step_after_a_failed_or_skipped_one_is_blocked",
        ),
        "the graph draws a step waiting on a failed step as to do, ready to start",
        quick=True,
    ),
    # one error root, the notebook package
    Mutant(
        "lookup-error-shown-as-usage",
        "ollie_nb/notebook/_failures.py",
        "if isinstance(exc, OllieUsageError):",
        "if isinstance(exc, (OllieUsageError, LookupError)):",
        (
            "tests/notebook/test_errors.py::test_a_bug_in_ollie_nb_shows_as_a_bug_not_as_a_usage_line",
        ),
        "a KeyError inside ollie_nb is shown as a one-line usage mistake, hiding the bug",
    ),
    Mutant(
        "own-backend-failure-not-named",
        "ollie_nb/notebook/_failures.py",
        'owner = f"{code.co_name}()"',
        "owner = None",
        (
            "tests/notebook/test_errors.py::test_the_users_own_chat_backend_failing_is_shown_as_theirs",
        ),
        "the user's own chat backend failing is shown as a bug of ollie_nb",
    ),
    Mutant(
        "usage-line-without-command",
        "ollie_nb/notebook/commands/_args.py",
        'raise UsageError(f"%ollie {self.prog}: {message}")',
        "raise UsageError(message)",
        (
            "tests/reliability/test_bad_input.py::test_bad_magic_lines_are_one_line_usage_errors[%ollie plan --bogus]",
        ),
        "a bad option's usage line does not say which %ollie command it is about",
    ),
    Mutant(
        "use-backend-off-the-loop-from-a-thread",
        "ollie_nb/notebook/_api.py",
        "if _on_loop_of(runtime):  # an async tool switching: it runs on the loop already",
        "if True:  # an async tool switching: it runs on the loop already",
        ("tests/notebook/test_core_on_its_loop.py::test_use_backend_switches_on_the_loop",),
        "use_backend() from a cell changes the core from the kernel thread, racing its loop",
    ),
    # one redaction call
    Mutant(
        "nested-secret-tail-leaks",
        "ollie_nb/redaction.py",
        "merged[-1][1] = max(merged[-1][1], stop)",
        "merged[-1][1] = stop",
        (
            "tests/reliability/test_redaction.py::test_a_secret_inside_a_longer_one_leaves_no_tail",
            "tests/reliability/test_redaction.py::test_no_character_of_any_secret_survives",
        ),
        "a key inside a longer token leaves the token's tail readable (***-EXTENDED-PART)",
        quick=True,
    ),
    Mutant(
        "overlapping-secrets-not-merged",
        "ollie_nb/redaction.py",
        "if merged and start <= merged[-1][1]:",
        "if merged and start < merged[-1][0]:",
        (
            "tests/reliability/test_redaction.py::test_overlapping_secrets_become_one_mask",
            "tests/reliability/test_redaction.py::test_no_character_of_any_secret_survives",
        ),
        "two secrets that overlap leave the second one's end readable",
        quick=True,
    ),
    Mutant(
        "short-assigned-password-shown",
        "ollie_nb/redaction.py",
        'if is_secret_name(match.group("name")) and is_secret_value(inner):',
        'if is_secret_name(match.group("name")) and len(inner) >= 8:',
        (
            "tests/reliability/test_redaction.py::test_short_values_of_secret_names_are_hidden",
            "tests/reliability/test_redaction.py::test_python_output_and_approvals_hide_short_passwords",
        ),
        "a 4-7 character password assigned in code or a dict shows in python_* output and approvals",
        quick=True,
    ),
    Mutant(
        "short-env-password-shown",
        "ollie_nb/core/_secrets.py",
        "if _secret_name(k) and is_secret_value(v))",
        "if _secret_name(k) and len(v) >= 8)",
        (
            "tests/reliability/test_redaction.py::test_short_env_passwords_are_known_secrets",
            "tests/reliability/test_redaction.py::test_python_output_and_approvals_hide_short_passwords",
        ),
        "a 4-7 character password of a secret-named environment variable shows in tool output",
        quick=True,
    ),
    Mutant(
        "approval-shows-unmasked-args",
        "ollie_nb/core/_routing.py",
        "shown = MaskedArgs(redacted, paths) if paths else redacted",
        "shown = MaskedArgs(redacted, paths) if paths else args",
        (
            "tests/reliability/test_redaction.py::test_python_output_and_approvals_hide_short_passwords",
        ),
        "an approval shows a short password the model wrote into the code",
        quick=True,
    ),
    Mutant(
        "service-errors-shown-as-usage",
        "ollie_nb/errors.py",
        "class ServiceError(OllieError):",
        "class ServiceError(OllieUsageError):",
        (
            "tests/notebook/test_failure_kinds.py",
            "tests/notebook/test_errors.py::test_a_providers_failure_is_shown_as_the_providers_in_one_line",
        ),
        "a provider's HTTP 503 or a failed task call reads as the user's usage mistake",
        quick=True,
    ),
    Mutant(
        "service-errors-shown-as-bugs",
        "ollie_nb/notebook/_failures.py",
        "    if isinstance(exc, ServiceError):\n",
        "    if False:\n",
        (
            "tests/notebook/test_failure_kinds.py",
            "tests/notebook/test_errors.py::test_a_providers_failure_is_shown_as_the_providers_in_one_line",
        ),
        "a provider's failure shows as an internal error of ollie_nb (a bug banner)",
    ),
    Mutant(
        "tracing-reenabled-exporter-stopped",
        "ollie_nb/core/_tracing.py",
        "        exporter = _borrowed(exporter)\n",
        "        pass\n",
        (
            "tests/core/test_tracing.py::test_tracing_turned_on_again_records_with_the_same_exporter_or_a_new_one",
        ),
        "tracing turned off and on again with the same exporter records nothing, silently",
        quick=True,
    ),
    Mutant(
        "audit-hook-at-import",
        "ollie_nb/core/_secrets.py",
        "_changes = _EnvironChanges()\n",
        "_changes = _EnvironChanges()\n_changes.start()\n",
        (
            "tests/core/test_tracing.py::test_importing_the_core_switches_nothing_on_and_hooks_nothing",
        ),
        "importing the core installs a process-wide audit hook",
        quick=True,
    ),
    Mutant(
        "remote-images-setting-not-passed",
        "ollie_nb/notebook/_magics.py",
        "            remote_images=self.remote_images,\n",
        "",
        (
            "tests/notebook/test_kernel_secrets.py::test_replies_load_no_remote_image_unless_the_user_opts_in",
        ),
        "%config OllieMagics.remote_images = True no longer loads a reply's images",
    ),
    Mutant(
        "debug-calls-a-provider-failure-internal",
        "ollie_nb/notebook/_failures.py",
        'source = exc.source if isinstance(exc, ServiceError) else ""',
        'source = ""',
        (
            "tests/notebook/test_errors.py::test_a_providers_failure_is_shown_as_the_providers_in_one_line",
        ),
        "%ollie debug titles a provider's failure 'the last internal error'",
    ),
    Mutant(
        "post-tool-hook-output-unredacted",
        "ollie_nb/core/_tool_step.py",
        "        redact = self.context.redact\n",
        "        redact = str\n",
        ("tests/core/test_tool_hooks.py::test_a_post_tool_hooks_output_holding_a_key_is_redacted",),
        "a postTool hook's text holding an API key reaches the model's context and the cell",
        quick=True,
    ),
    # packaging and secrets
    Mutant(
        "core-star-import-broken",
        "ollie_nb/core/__init__.py",
        "from ollie_nb.core._history import UsageTotals\n",
        "",
        ("tests/meta/test_public_names.py::test_a_star_import_finds_every_public_name",),
        "`from ollie_nb.core import *` raises AttributeError",
        quick=True,
    ),
    Mutant(
        "core-test-builds-its-own-agent-core",
        "tests/core/test_worker_log.py",
        '    core = await make_core(name="w1", start=False)\n',
        '    core = AgentCore(OfflineBackend(), name="w1", autosave=False)  # noqa: F821\n',
        (
            "tests/meta/test_core_test_style.py::test_tests_build_cores_with_make_core_and_run_as_anyio_tests",
        ),
        "a tests/core test builds AgentCore itself: no tmp workdir, no teardown closing its servers",
        quick=True,
    ),
    Mutant(
        "llm-test-builds-its-own-agent-core",
        "tests/llm/test_offline.py",
        "    core = await make_core(OfflineBackend(), agent=AgentConfig.from_dict({}))\n",
        "    core = AgentCore(OfflineBackend(), agent=AgentConfig.from_dict({}))  # noqa: F821\n",
        (
            "tests/meta/test_core_test_style.py::test_tests_build_cores_with_make_core_and_run_as_anyio_tests",
        ),
        "a test outside tests/core builds AgentCore itself: no tmp workdir, no teardown closing "
        "its servers",
        quick=True,
    ),
    Mutant(
        "kernel-wait-checks-nothing",
        "tests/support/waits.py",
        "    holds = wanted if callable(wanted) else lambda text: wanted in text\n",
        "    holds = wanted if callable(wanted) else lambda text: True\n",
        (
            "tests/notebook/test_parallel.py",
            "tests/notebook/test_frontend.py::test_watch_wakes_the_agent_when_another_client_finishes_a_step",
        ),
        "a kernel test's wait returns before its condition holds: the test checks a state "
        "the kernel has not reached",
    ),
    Mutant(
        "slow-tool-wait-on-a-file-never-written",
        "tests/support/fixtures/fake_task_server.py",
        '        Path(STARTED).write_text("sleeping")\n',
        '        Path(STARTED + ".other").write_text("sleeping")\n',
        (
            "tests/notebook/test_interrupts.py::test_ctrl_c_stops_a_slow_tool_and_the_session_survives",
        ),
        "the interrupt test waits on a file its tool does not write: it times out instead of "
        "sending Ctrl-C",
    ),
    Mutant(
        "missing-psycopg-is-a-traceback",
        "ollie_nb/tasks/_backends.py",
        "except ImportError as exc:",
        "except KeyError as exc:",
        (
            "tests/tasks/test_tasks_cli.py::test_a_postgresql_url_without_psycopg_says_what_to_install",
        ),
        "a postgresql:// URL without psycopg installed is a traceback, not what to install",
    ),
    Mutant(
        "new-secret-visible-until-the-ttl",
        "ollie_nb/core/_secrets.py",
        "if _changes.count != self._changes_seen or time.monotonic() - self._read_at > ENVIRON_TTL:",
        "if time.monotonic() - self._read_at > ENVIRON_TTL:",
        ("tests/core/test_secrets.py::test_a_secret_set_after_a_read_is_hidden_at_once",),
        "a secret set in the environment after a read shows unredacted for a while",
        quick=True,
    ),
    Mutant(
        "agent-status-shows-backend-url-unredacted",
        "ollie_nb/notebook/commands/agent.py",
        '("backend URL", core.redact(url))',
        '("backend URL", url)',
        (
            "tests/notebook/test_troubleshooting.py::test_a_wrong_model_url_is_named_in_the_error_in_status_and_in_the_docs",
        ),
        "%ollie agent shows a backend URL with its credentials in it",
    ),
    # LLM layer
    Mutant(
        "anthropic-thinking-not-sent-back",
        "ollie_nb/llm/_anthropic.py",
        "blocks = [block.to_wire() for block in m.thinking]",
        "blocks = []",
        ("tests/llm/test_anthropic.py::test_thinking_blocks_go_back_first_and_unchanged",),
        "with extended thinking, a tool-use turn's thinking is not sent back and the API refuses",
    ),
    Mutant(
        "anthropic-cache-breakpoint-on-last-user-only",
        "ollie_nb/llm/_anthropic.py",
        'if m["role"] == "user" and m["content"]][-2:]',
        'if m["role"] == "user" and m["content"]][-1:]',
        (
            "tests/llm/test_anthropic.py::test_cache_breakpoints_on_tools_system_and_the_tail_within_four",
        ),
        "the prompt cache misses on every turn: the previous turn's prefix is never marked",
    ),
    Mutant(
        "deepseek-reasoning-content-ignored",
        "ollie_nb/llm/_openai.py",
        '_REASONING_FIELDS = ("reasoning_content", "reasoning")',
        '_REASONING_FIELDS = ("reasoning",)',
        ("tests/llm/test_openai.py::test_deepseek_reasoning_content_streams_apart_from_the_reply",),
        "DeepSeek's reasoning is dropped: the user sees nothing while the model thinks",
        quick=True,
    ),
    Mutant(
        "openai-reasoning-streams-as-reply",
        "ollie_nb/llm/_openai.py",
        "yield ReasoningDelta(reasoning)",
        "yield TextDelta(reasoning)",
        ("tests/llm/test_openai.py::test_openrouter_and_groq_reasoning_field",),
        "OpenRouter/Groq reasoning is mixed into the reply and kept in the history",
        quick=True,
    ),
    Mutant(
        "groq-tool-use-failed-untyped",
        "ollie_nb/llm/_errors.py",
        'if error.get("code") != "tool_use_failed":',
        'if error.get("type") != "tool_use_failed":',
        ("tests/llm/test_openai.py::test_groq_tool_use_failed_in_the_stream_is_a_typed_error",),
        "Groq refusing a malformed tool call ends the turn instead of letting the model retry",
        quick=True,
    ),
    Mutant(
        "refused-tool-calls-retried-too-often",
        "ollie_nb/core/_turn.py",
        "MAX_TOOL_USE_RETRIES = 2",
        "MAX_TOOL_USE_RETRIES = 5",
        ("tests/llm/test_turns.py::test_refused_tool_calls_are_retried_a_bounded_number_of_times",),
        "a provider refusing every tool call is asked again five times, not twice",
        quick=True,
    ),
    Mutant(
        "context-overflow-compacts-forever",
        "ollie_nb/core/_turn.py",
        "                if compacted:\n                    raise\n",
        "",
        ("tests/llm/test_turns.py::test_a_second_overflow_ends_the_turn_with_the_error",),
        "a context still too long after compaction compacts again and again instead of ending",
        quick=True,
    ),
    Mutant(
        "agent-file-top-k-dropped",
        "ollie_nb/core/_config.py",
        'top_k=_opt(data, "topK", int, where, minimum=1),',
        "top_k=None,",
        (
            "tests/core/test_agent_file_ollie_keys.py::test_current_format_loads_and_reaches_the_generation_params",
        ),
        "an agent file's topK never reaches the model",
        quick=True,
    ),
    Mutant(
        "ollama-thinking-streams-as-reply",
        "ollie_nb/llm/_ollama.py",
        'yield ReasoningDelta(message["thinking"])',
        'yield TextDelta(message["thinking"])',
        ("tests/llm/test_ollama.py::test_native_thinking_streams_apart_and_think_is_asked_for",),
        "an Ollama model's thinking is mixed into the reply and kept in the history",
        quick=True,
    ),
    # leases in the task store
    Mutant(
        "lapsed-lease-leaves-no-event",
        "ollie_nb/tasks/_store.py",
        'self._event(conn, now, "lease_expired", task_id, payload)',
        "pass",
        (
            "tests/tasks/test_tasks_leases.py::test_a_lapsed_lease_hands_the_task_to_the_next_claimer[sqlite]",
        ),
        "a task whose claimer died is reopened silently: watchers never learn the lease lapsed",
    ),
    Mutant(
        "lapsed-lease-keeps-the-assignee",
        "ollie_nb/tasks/_store.py",
        "SET status = 'open', assignee = '', lease_until = NULL",
        "SET status = 'open', lease_until = NULL",
        (
            "tests/tasks/test_tasks_leases.py::test_a_lapsed_lease_hands_the_task_to_the_next_claimer[sqlite]",
        ),
        "a task reopened after a lapsed lease still names the dead claimer",
    ),
    Mutant(
        "heartbeat-does-not-renew",
        "ollie_nb/tasks/_store.py",
        'f"UPDATE tasks SET lease_until = {self.dialect.clock} + ?{told} "',
        'f"UPDATE tasks SET lease_until = lease_until + 0 * ?{told} "',
        ("tests/tasks/test_tasks_leases.py::test_heartbeats_keep_a_claim_past_its_lease[sqlite]",),
        "a working claimer's heartbeats do not keep its lease: another client takes the task",
    ),
    Mutant(
        "fresh-postgresql-database-has-no-tables",
        "ollie_nb/tasks/cli.py",
        "create = create or is_database_url(target)",
        "create = create",
        (
            "tests/tasks/test_tasks_cli.py::test_every_subcommand_creates_the_tables_in_a_fresh_postgresql_database",
        ),
        "ollie-tasks on a fresh PostgreSQL database fails: no tables",
    ),
    # MCP content and credentials
    Mutant(
        "image-at-the-cap-described",
        "ollie_nb/tools/_content.py",
        "if decoded_size(item.data) > MAX_IMAGE_BYTES:",
        "if decoded_size(item.data) >= MAX_IMAGE_BYTES:",
        (
            "tests/tools/test_mcp_content_bounds.py::test_an_image_over_the_byte_cap_is_described_not_sent",
        ),
        "an MCP image exactly at the byte cap is described instead of sent to the model",
        quick=True,
    ),
    Mutant(
        "resource-link-without-uri",
        "ollie_nb/tools/_content.py",
        'line = f"[resource link: {name} <{link.uri}>"',
        'line = f"[resource link: {name}"',
        ("tests/tools/test_mcp_content.py::test_images_resources_and_links_reach_the_model",),
        "the model sees an MCP resource link's name but not its URI, so it cannot read it",
    ),
    Mutant(
        "unauthorized-mcp-server-not-explained",
        "ollie_nb/tools/_mcp.py",
        "if response.status_code in (401, 403):",
        "if response.status_code in (403,):",
        ("tests/tools/test_mcp_auth.py::test_no_headers_says_how_to_give_them",),
        "an HTTP MCP server answering 401 gives no hint how to pass its credentials",
    ),
    Mutant(
        "task-only-tool-offered",
        "ollie_nb/tools/_mcp.py",
        'if _task_support(tool) == "required":',
        'if _task_support(tool) == "optional":',
        ("tests/tools/test_mcp_content.py::test_a_task_only_tool_is_not_offered_and_says_why",),
        "an MCP tool that only runs as a task is offered to the model, and every call fails",
    ),
    Mutant(
        "claim-heartbeat-without-token",
        "ollie_nb/tasks/_store.py",
        "        if caller is not None:\n            sql += \" AND coalesce(claim_token, '') = ?\"",
        "        if False:\n            sql += \" AND coalesce(claim_token, '') = ?\"",
        (
            "tests/tasks/test_tasks_claims.py::test_only_the_claims_token_changes_a_claimed_task[sqlite]",
        ),
        "any client naming itself alice renews alice's claim for as long as it likes",
        quick=True,
    ),
    Mutant(
        "claim-update-without-token",
        "ollie_nb/tasks/_store.py",
        "            if caller is not None:\n                self._check_token(conn, task_id, caller)\n            now = _now()",
        "            now = _now()",
        (
            "tests/tasks/test_tasks_claims.py::test_only_the_claims_token_changes_a_claimed_task[sqlite]",
            "tests/tasks/test_tasks_claims.py::test_a_lapsed_holder_cannot_settle_a_step_someone_else_claimed[sqlite]",
        ),
        "anyone takes over, settles or reopens a step someone else holds; a lapsed holder reopens bob's step",
        quick=True,
    ),
    Mutant(
        "claim-again-without-token",
        "ollie_nb/tasks/_store.py",
        "        if row[0] is not None:\n            self._check_token(conn, task_id, caller)",
        "        if row[0] is not None:\n            pass",
        (
            "tests/tasks/test_tasks_claims.py::test_only_the_claims_token_changes_a_claimed_task[sqlite]",
        ),
        "claiming again under the holder's name renews (and reveals) the holder's claim",
        quick=True,
    ),
    Mutant(
        "lapsed-claim-keeps-token",
        "ollie_nb/tasks/_store.py",
        '"claim_token = NULL, updated_at = ? WHERE id = ? AND lease_until = ?"',
        '"updated_at = ? WHERE id = ? AND lease_until = ?"',
        ("tests/tasks/test_tasks_claims.py::test_the_token_of_a_lapsed_claim_settles_nothing",),
        "a worker whose lease lapsed still marks its step done after it went back to open",
        quick=True,
    ),
    Mutant(
        "release-keeps-token",
        "ollie_nb/tasks/_store.py",
        '"UPDATE tasks SET status = ?, closed_at = NULL, lease_until = NULL, "\n                "claim_token = NULL WHERE id = ?"',
        '"UPDATE tasks SET status = ?, closed_at = NULL, lease_until = NULL "\n                "WHERE id = ?"',
        (
            "tests/tasks/test_tasks_claims.py::test_only_the_claims_token_changes_a_claimed_task[sqlite]",
        ),
        "a released task stays bound to the old token: nobody else may settle it",
        quick=True,
    ),
    Mutant(
        "label-setter-not-recorded",
        "ollie_nb/tasks/_store.py",
        "            setter = _actor(caller) or None",
        "            setter = None",
        (
            "tests/tasks/test_tasks_claims.py::test_a_label_records_the_http_user_who_set_it",
            "tests/tasks/test_tasks_claims.py::test_a_store_of_the_previous_schema_gains_label_setters",
        ),
        "task_read shows no one set alice's approval: a worker cannot tell who approved a plan",
        quick=True,
    ),
    Mutant(
        "label-setter-unnamed-shown",
        "ollie_nb/tasks/_store.py",
        "labels_by = {r[0]: r[1] for r in label_rows if r[1]}",
        "labels_by = {r[0]: r[1] for r in label_rows}",
        ("tests/tasks/test_tasks_claims.py::test_a_label_records_the_http_user_who_set_it",),
        "a label set over stdio reads as set by a null user instead of by no one named",
        quick=True,
    ),
    Mutant(
        "list-setters-not-read",
        "ollie_nb/tasks/server.py",
        'setters = format == "json" and "labels_by" in chosen',
        "setters = False",
        ("tests/tasks/test_tasks_claims.py::test_a_label_records_the_http_user_who_set_it",),
        "task_list never says who approved a plan: --approved-by alice works nothing",
        quick=True,
    ),
    Mutant(
        "client-never-asks-setters",
        "ollie_nb/planning/_client.py",
        'if self.caps.labels_by and "labels_by" not in fields:',
        "if False:",
        (
            "tests/core/test_approved_by_e2e.py::test_approved_by_alice_works_alices_approved_plan_not_mallorys",
        ),
        "the worker reads no approver: --approved-by alice leaves alice's plan unworked",
    ),
    Mutant(
        "approved-by-ignored",
        "ollie_nb/core/_worker.py",
        "return not self.approved_by or goal.labels_by.get(APPROVED_LABEL) in self.approved_by",
        "return True",
        (
            "tests/core/test_approved_by_e2e.py::test_approved_by_alice_works_alices_approved_plan_not_mallorys",
        ),
        "--approved-by alice works mallory's approved plan too",
    ),
    Mutant(
        "approved-by-not-refused",
        "ollie_nb/core/_worker.py",
        "if self.options.approved_by and not self.client.caps.labels_by:",
        "if False:",
        (
            "tests/core/test_approved_by_e2e.py::test_approved_by_is_refused_in_one_line_by_a_store_that_cannot_tell",
        ),
        "a store that cannot tell who approved: --approved-by silently works nothing",
    ),
    Mutant(
        "handover-keeps-token",
        "ollie_nb/tasks/_store.py",
        '"UPDATE tasks SET claim_token = CASE WHEN assignee = ? THEN claim_token END, "',
        '"UPDATE tasks SET claim_token = CASE WHEN assignee <> ? THEN claim_token END, "',
        ("tests/tasks/test_tasks_claims.py::test_handing_a_claim_over_ends_its_token",),
        "after handing a step to bob, the old holder's token still settles it",
        quick=True,
    ),
    Mutant(
        "claim-token-stored-plain",
        "ollie_nb/tasks/_store.py",
        "    return hashlib.sha256(token.encode()).hexdigest()",
        "    return token",
        (
            "tests/tasks/test_tasks_claims.py::test_tokens_stay_out_of_reads_the_event_log_and_the_database",
        ),
        "whoever can read the database file can act as every claim's holder",
        quick=True,
    ),
    Mutant(
        "lease-zero-accepted",
        "ollie_nb/tasks/_store.py",
        "        if seconds == 0 and not self.endless:",
        "        if seconds < 0 and not self.endless:",
        (
            "tests/tasks/test_tasks_claims.py::test_leases_are_capped_and_never_endless_by_default[sqlite]",
        ),
        "task_claim(lease=0) holds a step forever on a shared store",
        quick=True,
    ),
    Mutant(
        "lease-not-capped",
        "ollie_nb/tasks/_store.py",
        "        return min(seconds, self.cap)",
        "        return seconds",
        (
            "tests/tasks/test_tasks_claims.py::test_leases_are_capped_and_never_endless_by_default[sqlite]",
            "tests/tasks/test_tasks_claims.py::test_serve_options_set_the_cap_and_allow_endless_leases",
        ),
        "a client takes a week-long lease on a shared step",
        quick=True,
    ),
    Mutant(
        "http-user-claims-as-another",
        "ollie_nb/tasks/_store.py",
        '    if user and who not in ("", user):',
        '    if user and who not in ("", user, "alice"):',
        (
            "tests/tasks/test_tasks_claims.py::test_http_users_claim_renew_and_log_only_as_themselves",
        ),
        "bob's token claims and renews as alice",
        quick=True,
    ),
    Mutant(
        "http-user-not-logged",
        "ollie_nb/tasks/_store.py",
        "        if actor := _ACTOR.get():",
        '        if actor := "":',
        (
            "tests/tasks/test_tasks_claims.py::test_http_users_claim_renew_and_log_only_as_themselves",
        ),
        "the event log of a shared store does not say which user made a change",
        quick=True,
    ),
    Mutant(
        "http-user-not-passed",
        "ollie_nb/tasks/_http.py",
        '        await self._app({**scope, USER_KEY: user or ""}, receive, send)',
        "        await self._app(scope, receive, send)",
        (
            "tests/tasks/test_tasks_claims.py::test_http_users_claim_renew_and_log_only_as_themselves",
        ),
        "a named HTTP user is unknown to the tools: it claims as anyone",
        quick=True,
    ),
    Mutant(
        "tokens-file-line-unchecked",
        "ollie_nb/tasks/_http.py",
        "        if len(fields) != 2 or not _NAME.fullmatch(fields[0]):",
        "        if len(fields) < 2:",
        ("tests/tasks/test_tasks_claims.py::test_a_malformed_tokens_file_is_refused_in_one_line",),
        "a tokens file line with a stray word or a control character in a name is taken silently",
        quick=True,
    ),
    Mutant(
        "control-characters-stored",
        "ollie_nb/tasks/_store.py",
        "    found = _CONTROL.search(text)",
        "    found = None",
        (
            "tests/tasks/test_tasks_controls.py::test_control_characters_are_refused_naming_the_field",
        ),
        "a shared task's title carries ESC sequences to every terminal that lists it",
        quick=True,
    ),
    Mutant(
        "control-characters-after-strip",
        "ollie_nb/tasks/_store.py",
        '    assignee = _plain(raw, "assignee").strip()',
        '    assignee = _plain(raw.strip(), "assignee")',
        (
            "tests/tasks/test_tasks_controls.py::test_control_characters_are_refused_naming_the_field",
        ),
        "a NEL (C1) at the end of an assignee slips past the check, stripped as a space",
        quick=True,
    ),
    Mutant(
        "cli-prints-controls-raw",
        "ollie_nb/tasks/cli.py",
        "    print(_render.visible_controls(text))",
        "    print(text)",
        (
            "tests/tasks/test_tasks_controls.py::test_every_cli_view_shows_control_characters_escaped",
        ),
        "ollie-tasks list/show/tree/events write an OSC 52 title to the reader's clipboard",
        quick=True,
    ),
    Mutant(
        "cli-json-prints-c1-raw",
        "ollie_nb/tasks/cli.py",
        "    print(_render.json_controls(json.dumps(value, ensure_ascii=False, indent=2)))",
        "    print(json.dumps(value, ensure_ascii=False, indent=2))",
        (
            "tests/tasks/test_tasks_controls.py::test_every_cli_view_shows_control_characters_escaped",
        ),
        "ollie-tasks --json prints C1 controls (CSI) raw to the terminal",
        quick=True,
    ),
    Mutant(
        "failed-rounds-stop-one-late",
        "ollie_nb/core/_guardrails.py",
        "if self.stop_at and self.count >= self.stop_at:",
        "if self.stop_at and self.count > self.stop_at:",
        (
            "tests/core/test_guardrails.py::test_five_failed_rounds_nudge_once_and_ten_stop_the_turn",
            "tests/core/test_guardrails.py::test_the_keys_set_the_counts_and_a_successful_call_starts_again",
            "tests/core/test_guardrails.py::test_failed_rounds_counter_at_its_edges",
        ),
        "a model whose tool calls all fail is asked once more than failedRoundsLimit says",
        quick=True,
    ),
    Mutant(
        "failed-rounds-nudge-every-round",
        "ollie_nb/core/_guardrails.py",
        "if self.nudge_at and self.count == self.nudge_at:",
        "if self.nudge_at and self.count >= self.nudge_at:",
        (
            "tests/core/test_guardrails.py::test_five_failed_rounds_nudge_once_and_ten_stop_the_turn",
        ),
        "after five failed rounds every tool result carries the nudge, not the fifth only",
        quick=True,
    ),
    Mutant(
        "failed-rounds-not-reset-by-a-success",
        "ollie_nb/core/_guardrails.py",
        "        else:\n            self.count = 0\n",
        "",
        (
            "tests/core/test_guardrails.py::test_the_keys_set_the_counts_and_a_successful_call_starts_again",
            "tests/core/test_guardrails.py::test_failed_rounds_counter_at_its_edges",
        ),
        "a turn whose calls mostly work is stopped for failures that were not in a row",
        quick=True,
    ),
    Mutant(
        "context-warning-every-turn",
        "ollie_nb/core/_guardrails.py",
        '        if self.warned:\n            return ""\n',
        "",
        (
            "tests/core/test_guardrails.py::test_the_context_is_warned_about_once_at_60_percent_and_again_after_compaction",
            "tests/core/test_guardrails.py::test_context_warning_latch",
        ),
        "past 60% of the window every turn repeats the context warning",
        quick=True,
    ),
    Mutant(
        "context-warning-not-after-compaction",
        "ollie_nb/core/_turn.py",
        "        self.context_warning.rearm()  # ollie's reset: a compacted context is warned about again\n",
        "",
        (
            "tests/core/test_guardrails.py::test_the_context_is_warned_about_once_at_60_percent_and_again_after_compaction",
        ),
        "after a compaction the context passes 60% again without a word",
        quick=True,
    ),
    Mutant(
        "identical-writes-merged",
        "ollie_nb/core/_guardrails.py",
        "    if not read_only:\n        return None\n",
        "",
        (
            "tests/core/test_guardrails.py::test_identical_calls_to_a_read_only_tool_run_once_and_others_run_each_time",
        ),
        "two identical calls of a tool that writes run once: the second write never happens",
    ),
    Mutant(
        "identical-reads-run-each-time",
        "ollie_nb/core/_tool_step.py",
        "            copies = duplicates(batch, lambda p: p.key)\n",
        "            copies: dict[int, int] = {}\n",
        (
            "tests/core/test_guardrails.py::test_identical_calls_to_a_read_only_tool_run_once_and_others_run_each_time",
        ),
        "identical read-only calls of one response each run, as ollie fixed",
    ),
    Mutant(
        "bench-status-row-old-backend",
        "bench/status_read.py",
        'TaskServerPlanBackend(TaskClient(dispatcher.dispatch, "tasks"))',
        'TaskServerPlanBackend(dispatcher, "tasks")',
        ("tests/bench/test_bench_rows.py::test_each_row_runs_in_smoke_mode[status]",),
        "python -m bench fails at the status row with a TypeError (the backend's old constructor)",
        quick=True,
    ),
    Mutant(
        "bench-rows-numbered-from-zero",
        "bench/_rows.py",
        "    return ROWS.index(row) + 1",
        "    return ROWS.index(row)",
        (
            "tests/bench/test_bench_rows.py::test_the_performance_docs_list_the_rows_of_the_row_table",
        ),
        "every bench row prints a number one below the one PERFORMANCE.md gives it",
        quick=True,
    ),
    Mutant(
        "bench-row-left-out-of-the-table",
        "bench/_rows.py",
        "    fanout_large.ROW,\n",
        "",
        ("tests/bench/test_bench_rows.py::test_every_row_module_is_in_the_row_table",),
        "python -m bench silently stops running the 1,000-step fan-out row",
        quick=True,
    ),
    Mutant(
        "bench-smoke-judges-goals",
        "bench/_cli.py",
        "    judge = mode is not Mode.SMOKE",
        "    judge = True",
        ("tests/bench/test_bench_rows.py::test_each_row_runs_in_smoke_mode[notebook-tool]",),
        "a smoke run at tiny sizes marks goals as missed (NO) that no real run missed",
        quick=True,
    ),
    Mutant(
        "bench-smoke-full-sizes",
        "bench/_run.py",
        "        return smoke if self.smoke else full",
        "        return full",
        ("tests/bench/test_bench_rows.py::test_a_smoke_run_takes_tiny_sizes_and_one_repeat",),
        "python -m bench --smoke runs the rows at full size: many minutes instead of a few",
        quick=True,
    ),
    Mutant(
        "subagent-usage-not-in-session",
        "ollie_nb/core/_model_gateway.py",
        "        state.parent.usage.add(usage, context=False)\n",
        "        pass\n",
        (
            "tests/core/test_subagents.py::test_spawn_and_wait_return_the_childrens_replies_and_notes_reach_the_parent",
        ),
        "the session's usage and %ollie usage leave out every token its sub-agents spent",
        quick=True,
    ),
    Mutant(
        "tool-phase-without-its-tool",
        "ollie_nb/core/_context.py",
        'return f"tool:{self.tool}" if self.phase is Phase.TOOL else self.phase.value',
        "return self.phase.value",
        (
            "tests/core/test_core_events.py::test_the_phase_shows_as_the_status_words_with_the_running_tool",
        ),
        "the status says an agent runs a tool without saying which one",
        quick=True,
    ),
    Mutant(
        "turn-ended-without-its-result",
        "ollie_nb/core/_turn.py",
        "        self.context.emit(TurnEnded(result))\n",
        "        self.context.emit(TurnEnded(TurnResult(reply=result.reply)))\n",
        ("tests/core/test_agent_core.py::test_interrupt_while_waiting_for_the_model",),
        "a stopped turn is shown as one that finished",
        quick=True,
    ),
    Mutant(
        "round-saves-unthrottled",
        "ollie_nb/core/_conversation.py",
        "        wait = self._saved_at + SAVE_SHARE * self._save_cost - time.monotonic()\n",
        "        wait = 0.0\n",
        ("tests/core/test_round_saves.py::test_rounds_after_a_slow_save_share_one_deferred_save",),
        "a long session's turn spends most of its time writing the session file after each round",
        quick=True,
    ),
    Mutant(
        "step-turn-trusts-every-task-call",
        "ollie_nb/core/_routing.py",
        "        return scope is None or scope.permits(tool, args)",
        "        return True",
        (
            "tests/core/test_step_scope.py::test_a_step_turn_asks_for_any_other_change_and_every_delete",
            "tests/core/test_step_scope_e2e.py::test_an_injected_step_cannot_make_a_worker_delete_another_users_plan",
        ),
        "text injected into a shared step makes a worker delete another user's whole plan",
    ),
    Mutant(
        "step-scope-not-given-to-a-turn",
        "ollie_nb/core/_turn.py",
        "        self.scope, self.state.step = StepScope.of(start.step, start.asker), start.step",
        "        self.scope, self.state.step = None, start.step",
        (
            "tests/core/test_step_scope_e2e.py::test_an_injected_step_cannot_make_a_worker_delete_another_users_plan",
        ),
        "a watch or worker turn's task calls reach any task of the store unasked",
    ),
    Mutant(
        "run-child-works-without-its-step",
        "ollie_nb/core/_subagents.py",
        "TurnStarted(prompt, step=self.work, asker=self.name)",
        "TurnStarted(prompt, asker=self.name)",
        (
            "tests/core/test_step_scope_e2e.py::test_an_injected_step_cannot_make_a_worker_delete_another_users_plan",
        ),
        "a parallel run's sub-agent (and a worker's) may delete or change any task unasked",
    ),
    Mutant(
        "worker-logs-no-refusal",
        "ollie_nb/core/_worker.py",
        "        core.subagents.listeners.append(self._child_event)  # its steps' refused calls",
        "",
        (
            "tests/core/test_step_scope_e2e.py::test_an_injected_step_cannot_make_a_worker_delete_another_users_plan",
        ),
        "a worker refuses an injected delete without a word in its log",
    ),
    Mutant(
        "review-skipped-by-raw-task-create",
        "ollie_nb/core/_routing.py",
        "        if tool == TASK_CREATE and self.reviewing():",
        "        if tool == TASK_CREATE and False:",
        (
            "tests/core/test_step_scope.py::test_with_review_on_a_raw_task_create_asks_and_other_task_calls_do_not",
            "tests/core/test_step_scope_e2e.py::test_with_review_on_a_raw_task_create_is_refused_headless_and_asks_an_approver",
        ),
        "with reviewPlans on, the model files a plan with task_create and no one reviews it",
    ),
    Mutant(
        "worker-works-unapproved-plans",
        "ollie_nb/core/_worker.py",
        "        if self.every or APPROVED_LABEL not in goal.labels:\n            return self.every\n",
        "        if self.every or APPROVED_LABEL not in goal.labels:\n            return True\n",
        (
            "tests/core/test_step_scope_e2e.py::test_a_worker_works_the_approved_plans_by_default_and_every_plan_with_all",
        ),
        "a worker works a plan nobody approved (filed past the review, or by anyone with the store)",
    ),
    Mutant(
        "filed-plan-not-marked-approved",
        "ollie_nb/planning/_backends.py",
        '            mark = {"labels": [APPROVED_LABEL]} if self.client.caps.labels else {}',
        "            mark = {}",
        (
            "tests/core/test_step_scope_e2e.py::test_a_plan_the_agent_files_is_marked_approved_for_work",
        ),
        "workers never work the plans the agent files or the user approves",
    ),
    Mutant(
        "task-trust-covers-any-task-name",
        "ollie_nb/core/_routing.py",
        "            if server == self.task_server and tool in TASK_TOOLS:",
        '            if server == self.task_server and tool.startswith("task_"):',
        (
            "tests/reliability/test_task_server_choice.py::test_implicit_trust_covers_the_conventions_tools_on_the_task_server_only[task_upload-tasks-False]",
            "tests/reliability/test_task_server_choice.py::test_the_server_the_agent_file_names_holds_the_plans",
        ),
        "a task server's task_upload (named like the convention, not of it) runs without asking",
    ),
    Mutant(
        "task-server-first-listing-wins",
        "ollie_nb/core/_tool_servers.py",
        "    chosen = min(offering, key=rank)  # min keeps the first of equals: mcpServers order",
        "    chosen = offering[0]",
        (
            "tests/reliability/test_task_server_choice.py::test_ollie_tasks_holds_plans_over_a_server_listed_before_it_and_the_user_is_told",
            "tests/reliability/test_task_server_choice.py::test_a_search_server_listing_task_create_gets_no_plans_and_its_task_upload_asks",
        ),
        "a web-search server listed before ollie-tasks that lists task_create receives every plan",
    ),
    Mutant(
        "task-server-key-ignored",
        "ollie_nb/core/_tool_servers.py",
        "    named = config.task_server",
        '    named = ""',
        (
            "tests/reliability/test_task_server_choice.py::test_the_agent_files_task_server_key_names_the_one_that_holds_plans",
        ),
        "taskServer in the agent file has no effect: plans go to whichever server tools pick",
        quick=True,
    ),
    Mutant(
        "task-server-choice-untold",
        "ollie_nb/core/_tool_servers.py",
        "    if servers.task_server_notice:\n        servers.messages.append(servers.task_server_notice)",
        "    if False:\n        servers.messages.append(servers.task_server_notice)",
        (
            "tests/reliability/test_task_server_choice.py::test_a_search_server_listing_task_create_gets_no_plans_and_its_task_upload_asks",
        ),
        "the start line does not say which of two servers listing task_create holds plans",
    ),
    Mutant(
        "listing-description-uncapped",
        "ollie_nb/tools/_listing.py",
        "        if len(tool.description) > caps.description:",
        "        if False:",
        ("tests/tools/test_listing_caps.py::test_a_long_description_is_cut_and_says_so",),
        "a server's megabyte tool description goes out with every model request",
        quick=True,
    ),
    Mutant(
        "listing-schema-uncapped",
        "ollie_nb/tools/_listing.py",
        "        if size > caps.schema:",
        "        if False:",
        (
            "tests/tools/test_listing_caps.py::test_a_tool_whose_schema_is_over_its_cap_is_not_offered",
        ),
        "a server's megabyte input schema goes out with every model request",
        quick=True,
    ),
    Mutant(
        "listing-count-uncapped",
        "ollie_nb/tools/_listing.py",
        "        if len(kept) >= caps.tools or total + size > caps.total:",
        "        if False:",
        (
            "tests/tools/test_listing_caps.py::test_tools_past_the_count_or_the_total_are_not_offered_in_one_notice",
        ),
        "a server listing thousands of tools sends them all with every model request",
        quick=True,
    ),
    Mutant(
        "listing-notice-dropped",
        "ollie_nb/core/_tool_servers.py",
        "                if server.listing_notice:",
        "                if False:",
        (
            "tests/tools/test_listing_caps.py::test_a_hostile_servers_listing_is_cut_at_connect_with_one_notice",
        ),
        "a server's listing is cut with no word to the user about what its tools lost",
    ),
    Mutant(
        "history-images-all-sent",
        "ollie_nb/core/_model_gateway.py",
        "    messages = older_images_described(messages)  # each image is sent again every request",
        "    messages = list(messages)",
        (
            "tests/core/test_history_images.py::test_ten_screenshot_calls_send_the_last_eight_images_only",
        ),
        "after ten screenshot calls every request carries 40 images (tens of megabytes)",
    ),
    Mutant(
        "history-images-none-dropped",
        "ollie_nb/core/_history.py",
        "        if message.images and len(message.images) > room:",
        "        if False:",
        (
            "tests/core/test_history_images.py::test_older_images_become_a_note_and_the_last_ones_are_kept",
        ),
        "every image of the conversation is sent again with every request",
        quick=True,
    ),
    Mutant(
        "worker-log-raw",
        "ollie_nb/core/_worker.py",
        "        self._write(terminal_safe(line))",
        "        self._write(line)",
        (
            "tests/core/test_worker_log.py::test_a_step_title_with_an_escape_sequence_is_logged_escaped",
        ),
        "a step title's OSC 52 sequence in the worker's log writes the reader's clipboard",
        quick=True,
    ),
    Mutant(
        "terminal-safe-misses-c1",
        "ollie_nb/core/_terminal.py",
        '_CONTROL = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]")',
        '_CONTROL = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f]")',
        (
            "tests/core/test_worker_log.py::test_a_step_title_with_an_escape_sequence_is_logged_escaped",
        ),
        "a C1 control (CSI as one byte) in a step title reaches the terminal reading the log",
        quick=True,
    ),
    Mutant(
        "approver-set-late-unheard",
        "ollie_nb/core/_core.py",
        "        self._rebuild_context()  # the gate asks the new approver from the next call on\n",
        "",
        (
            "tests/core/test_step_scope_e2e.py::test_with_review_on_a_raw_task_create_is_refused_headless_and_asks_an_approver",
        ),
        "an approver set on a started agent is never asked: its calls stay denied",
    ),
    # Edges no one had listed (issue 37)
    Mutant(
        "unindexed-tool-calls-merged",
        "ollie_nb/llm/_openai.py",
        "        if not call_id:\n            return max(self._slots, default=0)",
        "        if True:\n            return max(self._slots, default=0)",
        (
            "tests/llm/test_openai.py::test_parallel_calls_without_index_are_told_apart_by_their_ids",
            "tests/llm/test_stream_properties.py::test_openai_tool_calls_come_out_whole_however_the_stream_is_cut",
        ),
        'two parallel calls from a server without `index` become one with `{"p": 1}{"f": 2}`',
        quick=True,
    ),
    Mutant(
        "unindexed-argument-piece-a-new-call",
        "ollie_nb/llm/_openai.py",
        "            return max(self._slots, default=0)",
        "            return len(self._slots)",
        (
            "tests/llm/test_openai.py::test_parallel_calls_without_index_are_told_apart_by_their_ids",
            "tests/llm/test_stream_properties.py::test_openai_tool_calls_come_out_whole_however_the_stream_is_cut",
        ),
        "a call's arguments streamed in pieces without `index` become nameless calls of their own",
        quick=True,
    ),
    Mutant(
        "thinking-budget-equal-to-max-tokens",
        "ollie_nb/llm/_anthropic.py",
        'if body["max_tokens"] <= budget:',
        'if body["max_tokens"] < budget:',
        (
            "tests/llm/test_anthropic.py::test_max_tokens_equal_to_the_thinking_budget_is_raised_above_it",
        ),
        "maxTokens equal to the thinking budget: Claude's request goes out 4000/4000, refused",
        quick=True,
    ),
    Mutant(
        "anthropic-tool-input-last-piece-only",
        "ollie_nb/llm/_anthropic.py",
        'self.calls[index]["json"].append(delta.partial_json)',
        'self.calls[index]["json"] = [delta.partial_json]',
        (
            "tests/llm/test_stream_properties.py::test_anthropic_text_and_tool_calls_come_out_whole_however_cut",
        ),
        "a tool call's arguments streamed in pieces arrive as their last piece: the call fails",
        quick=True,
    ),
    Mutant(
        "billed-cost-replaced-by-table",
        "ollie_nb/llm/_prices.py",
        "    if usage.cost is not None:\n        return usage\n",
        "",
        ("tests/llm/test_turns.py::test_the_cost_openrouter_bills_wins_over_the_price_table",),
        "OpenRouter billed $0.50 and %ollie cost shows the table's $0.00021",
        quick=True,
    ),
    Mutant(
        "draft-key-reused-after-delete",
        "ollie_nb/planning/_draft.py",
        "key = 1 + max((r.key for r in (*self.rows, *self.original)), default=-1)",
        "key = 1 + max((r.key for r in self.rows), default=-1)",
        (
            "tests/planning/test_plan_draft.py::test_the_last_step_deleted_then_a_step_added_is_a_deletion_and_an_addition",
            "tests/planning/test_plan_draft_properties.py::test_edits_in_any_order_keep_every_row_once_and_the_summary_true",
            "tests/planning/test_plan_draft_properties.py::test_deleted_rows_are_never_reported_as_renamed_added_ones",
        ),
        "delete the last step, add one: the model is told \"step 3: title changed to 'new'\"",
        quick=True,
    ),
    Mutant(
        "draft-order-releases-a-step-early",
        "ollie_nb/planning/_draft.py",
        "                if not waiting[dependent]:",
        "                if len(waiting[dependent]) <= 1:",
        (
            "tests/planning/test_plan_draft_properties.py::test_edits_in_any_order_keep_every_row_once_and_the_summary_true",
        ),
        "an edited plan saves a step before one of the two steps it waits for",
        quick=True,
    ),
    Mutant(
        "draft-edits-miss-a-deletion",
        "ollie_nb/planning/_draft.py",
        "        for key, gone in before.items():\n            if key not in now:",
        "        for key, gone in list(before.items())[:-1]:\n            if key not in now:",
        (
            "tests/planning/test_plan_draft_properties.py::test_edits_in_any_order_keep_every_row_once_and_the_summary_true",
        ),
        "the model is not told that the user deleted the plan's last step",
        quick=True,
    ),
    Mutant(
        "saved-plan-dependency-kept-on-server",
        "ollie_nb/core/_plans.py",
        "            await self.client.depend(row.task_id, blocker, remove=True)\n",
        "",
        (
            "tests/core/test_plan_review.py::test_a_dependency_removed_from_a_saved_plan_is_removed_on_the_task_server",
        ),
        "a dependency removed from a saved plan keeps the step blocked; the model is told it is not",
    ),
    Mutant(
        "unmarked-step-span-without-error",
        "ollie_nb/core/_tracing.py",
        '                error = error or "the step failed"',
        "                error = error",
        ("tests/core/test_tracing.py::test_a_step_the_sub_agent_left_unmarked_is_an_error_span",),
        "a step the sub-agent ended without marking done is a failed step span with no error status",
    ),
    Mutant(
        "traced-tool-arguments-known-secrets-only",
        "ollie_nb/core/_tracing.py",
        "shown = redact_data(pending.args, redact)",
        "shown = redact_data(pending.args, host.redact.known_only)",
        (
            "tests/core/test_tracing.py::test_a_key_the_model_wrote_into_tool_arguments_is_redacted_in_the_trace",
        ),
        "with content capture on, a key the model wrote into a tool call reaches the trace store",
    ),
    Mutant(
        "traced-reply-known-secrets-only",
        "ollie_nb/core/_tracing.py",
        'span.set_attribute("gen_ai.output.messages", _messages_json(reply, redact))',
        'span.set_attribute("gen_ai.output.messages", _messages_json(reply, redact.known_only))',
        (
            "tests/core/test_tracing.py::test_a_key_the_model_wrote_into_tool_arguments_is_redacted_in_the_trace",
        ),
        "with content capture on, a key in the model's reply or its call's arguments is traced whole",
    ),
    Mutant(
        "post-turn-output-carried-forever",
        "ollie_nb/core/_turn.py",
        "        self.carried = []\n",
        "",
        (
            "tests/core/test_tool_hooks.py::test_a_post_turn_hooks_output_reaches_the_next_prompt_only",
        ),
        "a postTurn hook's output is appended to every later prompt and keeps growing",
    ),
    Mutant(
        "cost-cap-reached-only-past-it",
        "ollie_nb/core/_budget.py",
        "if self.cost is not None and spend.cost >= self.cost:",
        "if self.cost is not None and spend.cost > self.cost:",
        (
            "tests/core/test_budget_properties.py::test_a_cap_is_reached_exactly_at_its_figure_the_dollars_first",
        ),
        "a session spent exactly its $1.00 cap and the next request is still sent",
        quick=True,
    ),
    Mutant(
        "tighter-caps-keep-the-first",
        "ollie_nb/core/_budget.py",
        "    return a if b is None else min(a, b)",
        "    return a",
        (
            "tests/core/test_budget_properties.py::test_the_tighter_of_two_caps_is_the_lower_of_each",
        ),
        "an agent's $5 cap under the environment's $1 cap lets $5 be spent",
        quick=True,
    ),
    Mutant(
        "outer-cap-named-before-the-innermost",
        "ollie_nb/core/_budget.py",
        "        for ledger in self.chain():\n            caps, held",
        "        for ledger in reversed(list(self.chain())):\n            caps, held",
        (
            "tests/core/test_budget_properties.py::test_the_innermost_ledger_whose_cap_is_reached_is_named",
        ),
        "a sub-agent at its own cap is told the session's cap is reached (and the run stops)",
        quick=True,
    ),
    Mutant(
        "environment-cap-of-zero-refuses-all",
        "ollie_nb/core/_budget.py",
        "    return value if value > 0 else None",
        "    return value if value >= 0 else None",
        (
            "tests/core/test_budget_properties.py::test_an_environment_cost_cap_is_a_number_above_zero",
            "tests/core/test_budget_properties.py::test_an_environment_token_cap_is_a_whole_number_above_zero",
        ),
        "OLLIE_MAX_SESSION_COST=0 (ollie's 'no cap') refuses every request",
        quick=True,
    ),
    Mutant(
        "environment-token-cap-below-one-refuses-all",
        "ollie_nb/core/_budget.py",
        "    if value < 1:\n        log.warning(",
        "    if value < 0:\n        log.warning(",
        ("tests/core/test_env_token_cap.py::test_a_token_cap_below_one_is_no_cap_and_is_said",),
        "OLLIE_MAX_SESSION_TOKENS=0.5 becomes a cap of 0 tokens that refuses every request",
        quick=True,
    ),
    Mutant(
        "footer-numbers-unseparated",
        "ollie_nb/notebook/_render.py",
        'f"this turn: {tokens_in:,} tokens in',
        'f"this turn: {tokens_in} tokens in',
        (
            "tests/notebook/test_render.py::test_the_footer_and_the_usage_row_write_numbers_with_thousands_separators",
        ),
        "the footer says 1592 tokens where the run summary says 1,592",
        quick=True,
    ),
    Mutant(
        "usage-numbers-unseparated",
        "ollie_nb/core/_history.py",
        '{self.input_tokens:,} tokens in, "',
        '{self.input_tokens} tokens in, "',
        (
            "tests/notebook/test_render.py::test_the_footer_and_the_usage_row_write_numbers_with_thousands_separators",
        ),
        "%ollie usage prints 2195 tokens in while run summaries print 1,592",
        quick=True,
    ),
    Mutant(
        "one-plan-as-a-range",
        "ollie_nb/core/_plans.py",
        'f"plans 1 to {count}" if count > 1 else "only plan 1" if count else "no plans yet"',
        'f"plans 1 to {count}" if count else "no plans yet"',
        (
            "tests/core/test_plan_review.py::test_a_missing_plan_with_one_plan_in_the_session_says_only_plan_1",
        ),
        "there is no plan 2 (this session has plans 1 to 1)",
        quick=True,
    ),
    Mutant(
        "backend-takes-a-url-as-model",
        "ollie_nb/notebook/commands/agent.py",
        'if len(words) > 1 and "://" in words[1]:',
        "if False:",
        ("tests/notebook/test_settings.py::test_a_bad_option_is_one_usage_line",),
        "%ollie backend openai http://127.0.0.1:9 answers: backend openai, model http://127.0.0.1:9",
    ),
    Mutant(
        "magics-doc-lacks-trust",
        "docs/MAGICS.md",
        "| `agent [NAME \\| PATH] [--trust]` |",
        "| `agent [NAME \\| PATH]` |",
        (
            "tests/meta/test_magics_doc.py::test_every_command_of_the_help_is_in_the_table_with_its_options",
        ),
        "docs/MAGICS.md does not say how to trust a project agent",
        quick=True,
    ),
    Mutant(
        "magics-doc-lacks-python",
        "docs/MAGICS.md",
        "| `python [on \\| off]` |",
        "| `pyth [on \\| off]` |",
        (
            "tests/meta/test_magics_doc.py::test_every_command_of_the_help_is_in_the_table_with_its_options",
        ),
        "docs/MAGICS.md has no row for %ollie python, which tutorial 07 uses",
        quick=True,
    ),
    Mutant(
        "tutorials-extra-without-otel",
        "pyproject.toml",
        'tutorials = ["pandas>=2.0", "ollie-nb[otel]"]',
        'tutorials = ["pandas>=2.0"]',
        ("tests/meta/test_tutorial_install.py",),
        "after the README's tutorial install, Run All stops at tutorial 06 (no opentelemetry.sdk)",
        quick=True,
    ),
    Mutant(
        "demo-planner-drops-silently",
        "ollie_nb/llm/_offline.py",
        """        if dropped:
            head += """,
        """        if False:
            head += """,
        (
            "tests/llm/test_offline.py::test_the_demo_planner_says_which_dependencies_it_left_out_and_why",
        ),
        "(after 7) in a 3-step list vanishes from the plan and the reply says nothing of it",
        quick=True,
    ),
    Mutant(
        "demo-planner-cycle-kept-quiet",
        "ollie_nb/llm/_offline.py",
        """        elif int(word) - 1 >= i:
            notes.append(""",
        """        elif int(word) - 1 >= i:
            pass
        if False:
            notes.append(""",
        (
            "tests/llm/test_offline.py::test_the_demo_planner_says_which_dependencies_it_left_out_and_why",
        ),
        "a forward reference that could make a cycle is dropped without a word",
        quick=True,
    ),
    Mutant(
        "demo-planner-plans-a-refused-plan",
        "ollie_nb/llm/_offline.py",
        'if first is not None and first.content.startswith("error:"):',
        "if False:",
        ("tests/llm/test_offline.py::test_a_refused_plan_is_reported_as_refused_not_as_planned",),
        "a 5,000-step plan is refused, yet the reply says Planned 5000 steps",
        quick=True,
    ),
    Mutant(
        "mcp-refused-as-raw-connecterror",
        "ollie_nb/tools/_mcp.py",
        '        unreachable = _unreachable(exc) if self.url else ""',
        '        unreachable = ""',
        ("tests/tools/test_mcp_unreachable.py::test_a_closed_port_says_refused_and_what_to_check",),
        "an MCP URL where nothing listens reads ConnectError: All connection attempts failed",
        quick=True,
    ),
    Mutant(
        "mcp-failure-shows-the-token-in-the-url",
        "ollie_nb/tools/_mcp.py",
        "            return _bare_url(self.url)",
        "            return self.url",
        ("tests/tools/test_mcp_unreachable.py::test_a_closed_port_says_refused_and_what_to_check",),
        "a token in the server URL's query is shown in the connect failure",
        quick=True,
    ),
    Mutant(
        "mcp-handshake-timeout-without-where",
        "ollie_nb/tools/_mcp.py",
        """                f"{self.name} ({self.target}): no answer to the MCP handshake within \"""",
        """                f"{self.name}: no answer to the MCP handshake within \"""",
        (
            "tests/tools/test_mcp_unreachable.py::test_a_silent_server_says_no_handshake_and_names_the_timeout_key",
        ),
        "a silent MCP server's timeout does not say which URL was tried",
        quick=True,
    ),
    Mutant(
        "worker-hides-why-it-has-no-task-server",
        "ollie_nb/core/_worker.py",
        '            failures = "; ".join(env.failures) if env is not None else ""',
        '            failures = ""',
        (
            "tests/core/test_worker_errors.py::test_a_refused_url_names_the_server_and_says_it_was_refused",
            "tests/core/test_worker_errors.py::test_a_wrong_token_names_the_server_and_the_401",
        ),
        "ollie-work with a refused task server URL says only that the agent has no task server",
    ),
    Mutant(
        "demo-planner-repeats-the-warning",
        "ollie_nb/llm/_offline.py",
        """        if result_lines and result_lines[-1].startswith("warning:"):""",
        """        if False:""",
        (
            "tests/llm/test_offline.py::test_a_plan_in_context_only_is_said_once_the_warning_line_not_repeated",
        ),
        "a plan that lives in context only has its warning shown twice in the cell",
        quick=True,
    ),
    Mutant(
        "run-empty-queue-hides-the-saved-plan",
        "ollie_nb/notebook/commands/plans.py",
        """    saved = [r for r in plans if r.kind == "tasks" and r.persisted]""",
        """    saved = []""",
        (
            "tests/notebook/test_render.py::test_an_empty_queue_with_a_plan_on_a_task_server_says_how_to_work_it",
            "tests/notebook/test_parallel.py::test_parallel_run_shows_a_tab_per_child_and_a_deterministic_summary",
        ),
        "%ollie run after a plan was saved on a task server only says the queue is empty",
    ),
    Mutant(
        "otlp-retries-spill-into-cells",
        "ollie_nb/core/_tracing.py",
        "        logging.getLogger(OTLP_LOGGER).setLevel(logging.CRITICAL)",
        "        pass",
        (
            "tests/notebook/test_tracing_trait.py::test_an_endpoint_where_nothing_listens_is_said_once_and_status_shows_tracing",
        ),
        "a wrong OTEL_EXPORTER_OTLP_ENDPOINT spills the SDK's retry lines into later cells",
    ),
    Mutant(
        "otlp-failure-said-every-time",
        "ollie_nb/core/_tracing.py",
        "        if not ok and not self._said:",
        "        if not ok:",
        (
            "tests/notebook/test_tracing_trait.py::test_an_endpoint_where_nothing_listens_is_said_once_and_status_shows_tracing",
        ),
        "every failed span export prints the tracing line again",
    ),
    Mutant(
        "status-without-tracing",
        "ollie_nb/notebook/commands/agent.py",
        """            ("tracing", core.redact(tracing().state)),\n""",
        "",
        (
            "tests/notebook/test_tracing_trait.py::test_an_endpoint_where_nothing_listens_is_said_once_and_status_shows_tracing",
        ),
        "%ollie status does not say whether tracing is on or where spans go",
    ),
    Mutant(
        "setup-does-not-wait-for-the-apt-lock",
        "scripts/setup.sh",
        """  [ -e "$file" ] || return 0\n""",
        """  return 0\n""",
        (
            "tests/meta/test_setup_script.py::test_a_held_lock_is_waited_for_and_the_wait_says_so",
            "tests/meta/test_setup_script.py::test_a_lock_held_past_the_limit_says_what_to_do_and_fails",
        ),
        "scripts/setup.sh fails at once (apt-get rc 100) when another apt-get holds the lock",
        quick=True,
    ),
    Mutant(
        "pump-not-woken-by-a-finished-call",
        "ollie_nb/notebook/_runtime.py",
        "        future.add_done_callback(self._wake)\n",
        "",
        (
            "tests/notebook/test_runtime_wake.py::test_a_no_op_call_returns_well_within_one_tick",
            "tests/notebook/test_runtime_wake.py::test_a_call_that_runs_code_on_the_kernel_thread_returns_within_one_tick",
        ),
        "every %ollie command that reads waits at least 50 ms, whatever its own work",
        quick=True,
    ),
    Mutant(
        "graph-collapses-open-chains",
        "ollie_nb/planning/_collapse.py",
        "if len(blockers) != 1 or statuses[i] is not StepState.DONE:",
        "if len(blockers) != 1:",
        (
            "tests/planning/test_plan_graph_large.py::test_an_open_step_at_the_end_of_a_finished_chain_stays_apart",
        ),
        "a large plan's graph hides open steps of a chain in one box, as if they were finished",
        quick=True,
    ),
    Mutant(
        "graph-box-counts-wrong",
        "ollie_nb/planning/graph.py",
        "        counts[view.statuses[i]] += 1\n",
        "        counts[view.statuses[i]] = 1\n",
        (
            "tests/planning/test_plan_graph_large.py::test_a_finished_chain_and_a_fan_out_become_one_box_each_with_their_counts",
        ),
        "a collapsed box of a large plan shows '1 done' for a chain of 5 finished steps",
        quick=True,
    ),
    Mutant(
        "graph-expand-ignored",
        "ollie_nb/planning/graph.py",
        "    if not expand and len(view.steps) > COLLAPSE_FROM:",
        "    if len(view.steps) > COLLAPSE_FROM:",
        (
            "tests/planning/test_plan_graph_large.py::test_past_the_threshold_the_graph_collapses_unless_expanded",
        ),
        "a large plan cannot be drawn in full: expand=True still gives the collapsed boxes",
        quick=True,
    ),
    Mutant(
        "graph-box-tooltip-without-titles",
        "ollie_nb/planning/graph.py",
        'shown = [f"{i + 1}. {view.steps[i].title}" for i in box.members[:_BOX_TOOLTIP_STEPS]]',
        'shown = [f"{i + 1}." for i in box.members[:_BOX_TOOLTIP_STEPS]]',
        (
            "tests/planning/test_plan_graph_large.py::test_a_hostile_title_stays_literal_in_a_box_and_in_its_tooltip",
        ),
        "hovering a collapsed box of a large plan shows step numbers without their titles",
        quick=True,
    ),
    Mutant(
        "approval-hides-invisible-characters",
        "ollie_nb/redaction.py",
        "        if not spans:  # shown as written: an approver sees invisible characters, escaped\n",
        "        if not spans and False:\n",
        ("tests/notebook/test_approval.py::test_long_arguments_are_shown_in_full_with_code_first",),
        "an approval shows a call's text with its direction marks removed: the user cannot see the trick",
    ),
    Mutant(
        "model-task-call-without-token",
        "ollie_nb/core/_routing.py",
        "        sent = self.held.with_token(tool, args)",
        "        sent = args",
        (
            "tests/core/test_claim_tokens.py::test_the_model_claims_and_settles_a_task_without_ever_seeing_its_token",
        ),
        "the model's task_update of a task the agent claimed is refused: no token went with it",
        quick=True,
    ),
    Mutant(
        "token-shown-to-the-model",
        "ollie_nb/core/_routing.py",
        "        return replace(result, text=without_tokens(result.text))",
        "        return result",
        (
            "tests/core/test_claim_tokens.py::test_the_model_claims_and_settles_a_task_without_ever_seeing_its_token",
        ),
        "the claim token reaches the model's context (and the saved session)",
        quick=True,
    ),
    Mutant(
        "heartbeat-refusal-ignored",
        "ollie_nb/planning/_client.py",
        "            if why:\n                lost(why)\n                return",
        "            if why:\n                return",
        (
            "tests/core/test_claim_tokens.py::test_a_sub_agent_whose_claim_is_lost_stops_and_leaves_the_step_to_its_new_holder",
            "tests/core/test_claim_tokens.py::test_a_watch_turn_whose_claim_is_lost_stops_and_leaves_the_step_to_its_new_holder",
        ),
        "a sub-agent keeps working a step another client holds now, and nobody is told",
        quick=True,
    ),
    Mutant(
        "watch-turn-goes-on-after-a-lost-claim",
        "ollie_nb/core/_turn_driver.py",
        "            self.cancel()  # this turn only stops: not a shutdown\n",
        "",
        (
            "tests/core/test_claim_tokens.py::test_a_watch_turn_whose_claim_is_lost_stops_and_leaves_the_step_to_its_new_holder",
        ),
        "a watch turn keeps working a step bob holds now, after its claim was lost",
        quick=True,
    ),
    Mutant(
        "lease-read-from-the-asked-value",
        "ollie_nb/planning/_client.py",
        "                    granted = float(words[0])",
        "                    granted = asked",
        (
            "tests/core/test_claim_tokens.py::test_heartbeats_follow_the_lease_the_server_granted_not_the_one_asked",
        ),
        "a lease the server cut to its cap lapses mid-step: heartbeats follow the lease asked",
        quick=True,
    ),
    Mutant(
        "claim-lease-0-refused-not-retried",
        "ollie_nb/planning/_client.py",
        "        if not _endless_refused(args, result):",
        "        if True:",
        (
            "tests/core/test_claim_tokens.py::test_claim_lease_0_on_a_server_that_needs_leases_says_so_once_and_takes_its_default",
        ),
        "with claimLease 0 every claim is refused by a server that needs leases: nothing is worked",
        quick=True,
    ),
    Mutant(
        "until-idle-exits-while-a-leased-claim-stands",
        "ollie_nb/core/_worker.py",
        "            leased = [t for t in self.held if t.leased]",
        "            leased = []",
        (
            "tests/core/test_workers.py::test_until_idle_waits_for_a_leased_claim_names_its_holder_then_works_what_it_unblocks",
        ),
        "ollie-work --until-idle exits 0 while another worker holds a step: what it unblocks waits",
    ),
    Mutant(
        "until-idle-waits-on-claims-without-end",
        "ollie_nb/planning/_client.py",
        "        return self.state.is_active and bool(self.lease_until)",
        "        return self.state.is_active",
        ("tests/core/test_workers.py::test_until_idle_does_not_wait_on_a_claim_without_end",),
        "ollie-work --until-idle never exits while someone holds a step with no lease",
    ),
    Mutant(
        "worker-exits-0-after-a-failed-step",
        "ollie_nb/core/_worker.py",
        "                return EXIT_FAILED if failed else 0",
        "                return 0",
        ("tests/core/test_workers.py::test_a_worker_exits_1_after_a_step_failed",),
        "a worker whose step failed exits 0: scripts and CI see success",
    ),
    Mutant(
        "cli-create-drops-blockers",
        "ollie_nb/tasks/cli.py",
        "store.create(args.title, args.body, args.parent, args.blockers, args.labels)",
        "store.create(args.title, args.body, args.parent, (), args.labels)",
        (
            "tests/tasks/test_tasks_cli_changes.py::test_create_takes_parent_blockers_body_and_labels",
        ),
        "`ollie-tasks create --blocker ID` makes a task that is ready at once",
        quick=True,
    ),
    Mutant(
        "cli-create-needs-a-database",
        "ollie_nb/tasks/cli.py",
        "    with _open(args, create=True) as store:\n        task_id",
        "    with _open(args) as store:\n        task_id",
        (
            "tests/tasks/test_tasks_cli_changes.py::test_create_prints_only_the_id_and_makes_a_new_database",
        ),
        "the first `ollie-tasks create` in a new project fails: no task database",
        quick=True,
    ),
    Mutant(
        "cli-done-sets-no-status",
        "ollie_nb/tasks/cli.py",
        '    done.set_defaults(status="done", assignee="")',
        '    done.set_defaults(status="", assignee="")',
        (
            "tests/tasks/test_tasks_cli_changes.py::test_done_says_what_it_unblocked_and_closes_the_goal",
        ),
        "`ollie-tasks done ID` answers 'nothing to update' and the task stays open",
        quick=True,
    ),
    Mutant(
        "cli-update-asks-for-a-claim-token",
        "ollie_nb/tasks/cli.py",
        "        unblocked = store.update(args.id, args.status, args.assignee, args.note)",
        "        from ollie_nb.tasks._store import Caller\n\n        unblocked = store.update(args.id, args.status, args.assignee, args.note, caller=Caller())",
        (
            "tests/tasks/test_tasks_cli_changes.py::test_update_and_note_need_no_claim_token_at_the_shell",
        ),
        "a person cannot settle or note a task an agent claimed: the shell is asked for its token",
        quick=True,
    ),
    Mutant(
        "update-answer-drops-unblocked",
        "ollie_nb/tasks/_render.py",
        '    lines += [f"unblocked: {ref_line(r)}" for r in unblocked]\n    return "\\n".join(lines)\n\n\ndef deleted_answer',
        '    return "\\n".join(lines)\n\n\ndef deleted_answer',
        (
            "tests/tasks/test_tasks_cli_changes.py::test_done_says_what_it_unblocked_and_closes_the_goal",
        ),
        "`ollie-tasks done` and task_update no longer say which tasks became ready",
        quick=True,
    ),
    Mutant(
        "cli-edit-drops-parent",
        "ollie_nb/tasks/cli.py",
        "store.edit(args.id, args.title, args.body, args.parent)",
        "store.edit(args.id, args.title, args.body)",
        ("tests/tasks/test_tasks_cli_changes.py::test_edit_revises_title_body_and_parent",),
        "`ollie-tasks edit ID --parent -` leaves the task under its goal",
        quick=True,
    ),
    Mutant(
        "cli-dep-ignores-remove",
        "ollie_nb/tasks/cli.py",
        "        if args.remove:\n",
        "        if False:\n",
        ("tests/tasks/test_tasks_cli_changes.py::test_dep_adds_refuses_a_cycle_and_removes",),
        "`ollie-tasks dep ID --on X --remove` says the edge exists and leaves the task blocked",
        quick=True,
    ),
    Mutant(
        "cli-delete-always-recursive",
        "ollie_nb/tasks/cli.py",
        "store.delete(args.id, args.recursive)",
        "store.delete(args.id, True)",
        (
            "tests/tasks/test_tasks_cli_changes.py::test_delete_refuses_a_task_with_children_unless_recursive",
        ),
        "`ollie-tasks delete GOAL` deletes the whole plan without --recursive",
        quick=True,
    ),
    Mutant(
        "cli-keeps-undecodable-arguments",
        "ollie_nb/tasks/cli.py",
        "        _refuse_undecodable(args)\n",
        "",
        (
            "tests/tasks/test_tasks_cli_changes.py::test_a_refusal_is_one_escaped_line_exit_1_and_changes_nothing",
        ),
        "a title typed in Latin-1 ends `ollie-tasks create` in a UnicodeEncodeError traceback",
        quick=True,
    ),
    Mutant(
        "cli-usage-error-raw-controls",
        "ollie_nb/tasks/cli.py",
        "        super().error(_render.visible_controls(message))",
        "        super().error(message)",
        (
            "tests/tasks/test_tasks_cli_changes.py::test_a_usage_error_shows_control_characters_escaped",
        ),
        "a mistyped --status holding an escape sequence drives the terminal in the usage error",
        quick=True,
    ),
    Mutant(
        "cli-delete-answer-not-the-tools",
        "ollie_nb/tasks/cli.py",
        "        _print(_render.deleted_answer(deleted))",
        '        _print("deleted " + ", ".join(deleted))',
        (
            "tests/tasks/test_tasks_cli_changes.py::test_the_shell_and_the_mcp_tools_answer_and_log_alike",
            "tests/tasks/test_tasks_cli_changes.py::test_delete_refuses_a_task_with_children_unless_recursive",
        ),
        "`ollie-tasks delete` words its answer unlike task_delete",
    ),
    Mutant(
        "cli-docs-miss-a-command",
        "docs/TASK_SERVER.md",
        "  note ID TEXT [--json]                                 update ID --note TEXT\n",
        "",
        ("tests/tasks/test_tasks_cli_changes.py::test_every_subcommand_is_in_the_docs_cli_table",),
        "docs/TASK_SERVER.md's CLI table lacks a command `ollie-tasks --help` lists",
        quick=True,
    ),
    Mutant(
        "worker-library-failure-is-a-traceback",
        "ollie_nb/work.py",
        "    except Exception as exc:  # a library's failure (a task group's, a connection's): one line\n",
        "    except OllieError as exc:  # mutated\n",
        ("tests/core/test_worker_command_line.py",),
        "ollie-work ends in a raw ExceptionGroup traceback (httpx ConnectError) instead of one line",
        quick=True,
    ),
    Mutant(
        "subagent-cap-line-unsaid-in-the-run",
        "ollie_nb/core/_parallel_run.py",
        "        if child is not None and child.capped:  # said where the user reads the run, not only kept\n",
        "        if False:\n",
        (
            "tests/core/test_model_gateway.py::test_a_sub_agent_cap_in_a_parallel_run_refuses_each_childs_second_request",
        ),
        "with maxSubagentTokens 10 a parallel run's children stop at their cap and no line says so",
    ),
    Mutant(
        "tool-call-around-the-tool-gateway",
        "ollie_nb/core/_tool_step.py",
        "            result = await context.router.dispatch(pending.call, pending.args)  # redacted there\n",
        "            result = await context.router.dispatcher.dispatch(\n"
        "                *context.router.routes[pending.call.name], pending.args\n"
        "            )\n",
        ("tests/meta/test_tool_gateway_only.py",),
        "a tool call skips the tool gateway: no claim token, no token cut from the answer",
        quick=True,
    ),
    Mutant(
        "claim-next-picks-outside-its-claim",
        "ollie_nb/tasks/_store.py",
        "        def work(conn: Conn) -> Taken | None:\n            task_id = self._pick_next(conn, goals, wanted)\n",
        "        picked = self._run(lambda c: self._pick_next(c, goals, wanted), write=False)\n\n        def work(conn: Conn) -> Taken | None:\n            task_id = picked\n",
        ("tests/tasks/test_tasks_claim_next.py::test_four_servers_claim_next_take_each_step_once",),
        "claim-next picks its step before taking the write lock: two workers pick the same "
        "step, one is refused and answers none while steps are still ready",
    ),
    Mutant(
        "claim-next-ignores-blockers",
        "ollie_nb/tasks/_store.py",
        "        where = f\"t.status = 'open' AND NOT {self.dialect.blocked}\"",
        "        where = \"t.status = 'open'\"",
        (
            "tests/tasks/test_tasks_claim_next.py::test_claim_next_takes_the_first_ready_of_ids_and_skips_blocked_steps",
        ),
        "claim-next picks a blocked step: its claim fails and the worker gets nothing though "
        "another step is ready",
        quick=True,
    ),
    Mutant(
        "claim-next-strands-a-handed-back-step",
        "ollie_nb/tasks/_store.py",
        "        where = f\"t.status = 'open' AND NOT {self.dialect.blocked}\"\n        params: list[Any] = []",
        "        where = f\"t.status = 'open' AND t.assignee IN ('', ?) AND NOT {self.dialect.blocked}\"\n"
        '        params: list[Any] = [""]',
        (
            "tests/tasks/test_tasks_claim_next_handback.py::test_a_step_handed_back_by_any_assignee_is_claimed_next",
        ),
        "a step handed back by an old per-step assignee (or another worker) is never picked by "
        "claim-next: the plan waits for ever with the step open",
    ),
    Mutant(
        "claim-next-refuses-a-step-assigned-to-another",
        "ollie_nb/tasks/_store.py",
        "fresh, anyones=True)",
        "fresh)",
        (
            "tests/tasks/test_tasks_claim_next_handback.py::test_a_step_handed_back_by_any_assignee_is_claimed_next",
        ),
        "claim-next picks a step handed back by another assignee but its claim fails: the "
        "worker is answered none while that step is open",
    ),
    Mutant(
        "claim-next-asks-for-approval",
        "ollie_nb/planning/_convention.py",
        "        TASK_CLAIM,\n        TASK_CLAIM_NEXT,\n",
        "        TASK_CLAIM,\n",
        (
            "tests/core/test_claim_next_trust.py::test_the_models_claim_next_runs_unasked_and_its_token_stays_hidden",
        ),
        "the model's task_claim_next asks for approval while task_claim does not, and once "
        "approved its claim's token is shown to the model",
        quick=True,
    ),
    Mutant(
        "claim-next-offers-every-ready-step",
        "ollie_nb/core/_parallel_run.py",
        "        offered = list(itertools.islice(ready, NEXT_CHOICES))",
        "        offered = list(ready)",
        (
            "tests/core/test_claim_next_many_ready.py::test_a_run_over_more_ready_steps_than_one_claim_offers_claims_them_all",
        ),
        "a run over hundreds of ready steps sends them all in each claim: past the server's "
        "limit every claim is refused and the run stalls with steps ready",
    ),
    Mutant(
        "watch-reads-a-step-its-turn-closed",
        "ollie_nb/core/_watch.py",
        "        if ended is not None and ended.is_closed:\n",
        "        if False:\n",
        (
            "tests/core/test_watch_step_settles.py::test_a_watch_step_its_turn_closed_is_not_read_again",
        ),
        "the watched chain reads every step again after its turn closed it: one more task "
        "server round trip per step",
    ),
    Mutant(
        "worker-starts-reading-the-log-from-0",
        "ollie_nb/core/_worker.py",
        "            head = await self.client.head()",
        "            head = None",
        (
            "tests/core/test_worker_log_end.py::test_a_worker_starts_from_the_logs_end_and_picks_up_a_new_step",
        ),
        "a worker on a long event log walks it from the start (seconds of CPU on a big store)",
    ),
    Mutant(
        "newest-events-paged-from-the-start",
        "ollie_nb/planning/_client.py",
        "        if self.caps.event_tail:\n            return (await self._tail(0, count)).events",
        "        if False:\n            return (await self._tail(0, count)).events",
        ("tests/core/test_worker_log_end.py::test_the_newest_events_are_read_from_the_end",),
        "reading the newest events pages through the whole log",
    ),
    Mutant(
        "events-tail-reads-the-oldest",
        "ollie_nb/tasks/_store.py",
        'order = "DESC" if newest else ""',
        'order = ""',
        ("tests/tasks/test_tasks_claim_next.py::test_task_events_tail_reads_the_newest_events",),
        "task_events(tail=true) answers the oldest events: a worker starts at the log's start",
        quick=True,
    ),
    Mutant(
        "watch-starts-paging-the-log",
        "ollie_nb/core/_event_reader.py",
        "        head = await self.client.head()\n        if head is not None:",
        "        head = await self.client.head()\n        if False:",
        ("tests/core/test_worker_log_end.py::test_the_watch_starts_from_the_logs_end",),
        "the watch's start pages through the whole event log (seconds on a long log)",
    ),
    Mutant(
        "settle-reads-a-step-its-child-marked-done",
        "ollie_nb/core/_parallel_run.py",
        "        ended = self._client.held.ended(step_id)",
        "        ended = None",
        (
            "tests/core/test_claim_next_runs.py::test_a_run_claims_with_claim_next_and_settles_without_a_read",
        ),
        "every step a child marked done costs the run one more task-server read",
        quick=True,
    ),
    Mutant(
        "parallel-run-claims-by-id-beside-claim-next",
        "ollie_nb/core/_parallel_run.py",
        "        if self.store.claims_next:\n            await self._start_next(statuses)",
        "        if False:\n            await self._start_next(statuses)",
        (
            "tests/core/test_claim_next_runs.py::test_a_run_claims_with_claim_next_and_settles_without_a_read",
        ),
        "a run on a server with task_claim_next claims step by step, refused when another took one",
        quick=True,
    ),
    Mutant(
        "claim-next-token-not-held",
        "ollie_nb/planning/_client.py",
        "        if tool in (TASK_CLAIM, TASK_CLAIM_NEXT) and ok and task_id:",
        "        if tool == TASK_CLAIM and ok and task_id:",
        (
            "tests/planning/test_claim_next_answers.py::test_a_claim_next_answer_names_its_step_and_its_token_is_held",
        ),
        "a step the model claimed with task_claim_next loses its token: its own update is refused",
        quick=True,
    ),
    # Sessions saved by appending (issue 38)
    Mutant(
        "session-child-history-appended-whole",
        "ollie_nb/core/_session_log.py",
        "            n: h[self._children[n].count if n in self._children else 0 :]\n",
        "            n: h[0:]\n",
        (
            "tests/core/test_session_log.py::test_a_sub_agents_new_messages_are_appended_not_its_whole_history",
        ),
        "each save during a parallel run writes every sub-agent's whole history again",
        quick=True,
    ),
    Mutant(
        "session-listing-reads-one-chunk",
        "ollie_nb/core/_session_log.py",
        "        if begin > 0 or start == floor:\n",
        "        if True:\n",
        (
            "tests/core/test_session_log.py::test_a_listing_finds_a_last_line_longer_than_its_first_read",
        ),
        "%ollie sessions shows 0 messages for a session whose last turn had a long tool result",
        quick=True,
    ),
    Mutant(
        "session-newer-format-read-as-ours",
        "ollie_nb/core/_session_log.py",
        '    if header.get("format") != LOG_FORMAT:\n',
        "    if False:\n",
        (
            "tests/core/test_session_log.py::test_a_newer_format_or_a_malformed_record_is_a_clear_error",
        ),
        "a session saved by a newer ollie_nb resumes with parts of it silently missing",
        quick=True,
    ),
    Mutant(
        "session-saved-only-at-turn-end",
        "ollie_nb/core/_core.py",
        "            save_round=self.round_saves.round_ended,\n",
        "            save_round=lambda: None,\n",
        (
            "tests/core/test_session_log.py::test_a_tool_round_and_the_turns_end_each_append_their_own_messages",
        ),
        "a kernel killed during a long turn loses every tool round of it from the saved session",
        quick=True,
    ),
    Mutant(
        "session-save-skips-known-secrets",
        "ollie_nb/core/_secrets.py",
        "        if not any(secret in text for secret in self._known):\n",
        "        if True:\n",
        (
            "tests/reliability/test_security.py::test_the_key_never_appears_in_events_history_sessions_reprs_or_logs",
            "tests/reliability/test_secret_sources.py::test_a_secret_with_quotes_backslashes_or_accents_is_redacted_in_the_files",
        ),
        "the API key a user pasted into a prompt is written to the session file in clear",
        quick=True,
    ),
    Mutant(
        "session-log-torn-line-read",
        "ollie_nb/core/_session_log.py",
        '    lines = raw[:end].split(b"\\n")[:-1]\n',
        '    lines = raw.rstrip(b"\\n").split(b"\\n")\n',
        ("tests/core/test_session_log.py::test_a_torn_last_line_is_dropped_wherever_it_was_cut",),
        "a session whose writer was killed mid-line cannot be resumed: 'corrupt session file'",
        quick=True,
    ),
    Mutant(
        "session-log-appends-after-torn-bytes",
        "ollie_nb/core/_session_log.py",
        "        if read.torn or not read.snapshot:\n",
        "        if not read.snapshot:\n",
        (
            "tests/core/test_session_log.py::test_a_writer_killed_mid_line_leaves_a_session_that_resumes",
        ),
        "a session resumed after a crash is saved after the torn bytes and never loads again",
    ),
    Mutant(
        "session-save-rewrites-every-turn",
        "ollie_nb/core/_session_log.py",
        "        if self._can_append(path, name, history, children) and secrets <= self._secrets:\n",
        "        if False:\n",
        (
            "tests/core/test_session_log.py::test_each_turn_appends_its_messages_only_to_the_same_file",
            "tests/core/test_session_log.py::test_a_resumed_session_goes_on_appending_to_its_file",
        ),
        "every turn rewrites the whole session file: a long session's turns slow down as it grows",
        quick=True,
    ),
    Mutant(
        "session-resume-rewrites-its-file",
        "ollie_nb/core/_session_log.py",
        "        self._remember(path, history, children, name, fields, read.snapshot)\n"
        "        self._stat = _stat(path)\n",
        "        self._remember(path, history, children, name, fields, read.snapshot)\n",
        ("tests/core/test_session_log.py::test_a_resumed_session_goes_on_appending_to_its_file",),
        "the first save after %ollie resume rewrites the whole file (a 10,000-message session pays it)",
        quick=True,
    ),
    Mutant(
        "session-appended-lines-unredacted",
        "ollie_nb/core/_session_log.py",
        "            _write_all(fd, encode_line(record, redact))\n",
        "            _write_all(fd, encode_line(record, None))\n",
        ("tests/core/test_session_log.py::test_appended_lines_are_redacted",),
        "a secret said after the first save is written to the session file in clear",
        quick=True,
    ),
    Mutant(
        "session-rename-appended",
        "ollie_nb/core/_session_log.py",
        "            and name == self._name\n",
        "",
        (
            "tests/core/test_session_log.py::test_rename_compact_and_clear_leave_files_that_load_as_the_session",
        ),
        "%ollie rename is saved but %ollie sessions and resume by name still show the old name",
        quick=True,
    ),
    Mutant(
        "session-listing-ignores-appends",
        "ollie_nb/core/_session_log.py",
        '        if size > len(first) + int(header.get("snapshot_bytes", 0)):\n',
        "        if False:\n",
        (
            "tests/core/test_session_log.py::test_a_listing_reads_the_header_and_the_last_line_only",
            "tests/core/test_session_log.py::test_a_resumed_session_goes_on_appending_to_its_file",
        ),
        "%ollie sessions counts only the messages of the last rewrite",
        quick=True,
    ),
    Mutant(
        "session-log-never-rewritten",
        "ollie_nb/core/_session_log.py",
        "            and self._stat[1] <= REWRITE_FACTOR * self._snapshot\n",
        "",
        ("tests/core/test_session_log.py::test_a_log_past_twice_its_snapshot_is_rewritten_as_one",),
        "a session file grows without end (every change since the first save kept) and loads slower",
        quick=True,
    ),
    Mutant(
        "session-first-format-appended-to",
        "ollie_nb/core/_session_log.py",
        "        return LogRead(_document(path, raw), len(raw), False, 0)\n",
        "        return LogRead(_document(path, raw), len(raw), False, len(raw))\n",
        (
            "tests/core/test_session_log.py::test_a_session_of_the_first_format_loads_and_goes_on_as_a_log",
        ),
        "a session saved before the log format is resumed, saved once more, and never loads again",
        quick=True,
    ),
    Mutant(
        "run-cap-line-repeats-its-spend",
        "ollie_nb/core/_parallel_run.py",
        "        if not self.spend or self.cap_spent:",
        "        if not self.spend:",
        (
            "tests/core/test_run_headline.py::test_a_run_stopped_by_its_plan_cap_states_its_spend_once",
        ),
        "a run stopped by its plan cap titles its table with the spend twice",
        quick=True,
    ),
    Mutant(
        "capped-queue-step-leaves-the-queue",
        "ollie_nb/core/_turn_driver.py",
        "            self.prompts.put_first(item)",
        "            pass",
        (
            "tests/core/test_queue_plan_order.py::test_a_step_a_cap_stops_goes_back_first_and_the_run_after_raising_it_continues",
            "tests/core/test_queue_plan_order.py::test_a_step_stopped_by_stop_goes_back_first_and_run_works_it",
        ),
        "a queue plan's step stopped by a cap or Stop is in no queue: %ollie run skips it",
        quick=True,
    ),
    Mutant(
        "capped-queue-step-fails",
        "ollie_nb/core/_turn_driver.py",
        "        if result.interrupted or result.capped:",
        "        if result.interrupted:",
        (
            "tests/core/test_queue_plan_order.py::test_a_step_a_cap_stops_goes_back_first_and_the_run_after_raising_it_continues",
        ),
        "a queue plan's step a cap stopped shows as failed and is not worked again",
        quick=True,
    ),
    Mutant(
        "queue-step-after-an-unfinished-blocker-worked",
        "ollie_nb/planning/_book.py",
        "        return {b: state for b, state in found.items() if not state.unblocks}",
        "        return {b: state for b, state in found.items() if state.is_failed}",
        ("tests/core/test_queue_plan_order.py::test_a_step_whose_blocker_failed_is_not_worked",),
        "the step after one skipped for a failed blocker is worked anyway",
        quick=True,
    ),
    Mutant(
        "subagent-carries-earlier-steps",
        "ollie_nb/core/_subagents.py",
        "        self.conversation.history, self.conversation.errors = [], []",
        "        self.conversation.errors = []",
        (
            "tests/core/test_step_context.py::test_the_twelfth_steps_first_request_is_the_size_of_the_firsts",
        ),
        "a sub-agent's requests grow with every step it worked: a run's tokens grow quadratically",
        quick=True,
    ),
    Mutant(
        "step-prompt-without-blocker-reports",
        "ollie_nb/core/_parallel_run.py",
        "        note = self._reported(index)",
        '        note = ""',
        (
            "tests/core/test_step_context.py::test_the_twelfth_steps_first_request_is_the_size_of_the_firsts",
        ),
        "a step's sub-agent does not learn what the steps it waits for reported",
        quick=True,
    ),
    Mutant(
        "interrupted-header-bar-full",
        "ollie_nb/notebook/_render.py",
        "        return (total if finished and not self.interrupted else step - 1), total",
        "        return (total if finished else step - 1), total",
        (
            "tests/notebook/test_header_bar.py::test_a_drain_without_a_plan_fills_its_bar_only_when_not_interrupted",
        ),
        "after Stop the header's bar is full though steps are left",
        quick=True,
    ),
    Mutant(
        "header-bar-not-the-plans-progress",
        "ollie_nb/notebook/_render.py",
        "        if self.plan_progress is not None:\n            return self.plan_progress\n",
        "",
        (
            "tests/notebook/test_header_bar.py::test_an_interrupted_queue_run_reads_the_plans_steps_done_over_its_bar",
        ),
        "a queue run's header bar counts queue places, not the plan's steps done",
        quick=True,
    ),
    Mutant(
        "plan-progress-not-told-after-a-step",
        "ollie_nb/core/_turn_driver.py",
        "            self._settle(item, marked, result)\n            self._progress(marked, context.emit)\n",
        "            self._settle(item, marked, result)\n",
        (
            "tests/core/test_queue_plan_order.py::test_a_step_a_cap_stops_goes_back_first_and_the_run_after_raising_it_continues",
        ),
        "the header's bar stays one step behind the plan",
        quick=True,
    ),
    Mutant(
        "worker-turn-shows-the-last-turns-usage",
        "ollie_nb/notebook/_parallel_widget.py",
        "            self.view.restart()",
        "            pass",
        ("tests/notebook/test_header_bar.py::test_a_workers_interrupted_turn_shows_its_own_usage",),
        "a worker's interrupted step shows the tokens of the step it worked before",
        quick=True,
    ),
    Mutant(
        "graph-after-stop-from-a-stale-read",
        "ollie_nb/notebook/_render.py",
        "            statuses = self._told.get(view.record.number)",
        "            statuses = None",
        (
            "tests/notebook/test_header_bar.py::test_the_cells_graph_shows_the_states_the_agent_told_not_a_stale_read",
        ),
        "after Stop in a background queue run the graph still shows the stopped step in progress",
        quick=True,
    ),
    Mutant(
        "capped-queue-step-off-the-queue-in-a-kernel",
        "ollie_nb/core/_turn_driver.py",
        "            self.prompts.put_first(item)",
        "            self.prompts.put(item)",
        ("tests/notebook/test_queue_order_kernel.py",),
        "%ollie queue lists the capped step after the steps that wait for it",
    ),
    Mutant(
        "first-command-loads-secret-detectors",
        "ollie_nb/redaction.py",
        "    if len(text) < MIN_DETECTED_CHARS:  # nothing shorter is reported: the detectors can wait\n"
        "        return []\n",
        "",
        (
            "tests/notebook/test_first_command_imports.py::test_the_first_status_leaves_the_modules_of_later_uses_unloaded",
        ),
        "the first %ollie command loads detect-secrets and requests to redact empty server details",
    ),
    Mutant(
        "first-command-loads-pydantic",
        "ollie_nb/tools/_notebook.py",
        "from ollie_nb.tools._dispatcher import exc_summary\n",
        "from pydantic import ValidationError\n\nfrom ollie_nb.tools._dispatcher import exc_summary\n",
        (
            "tests/notebook/test_first_command_imports.py::test_the_first_status_leaves_the_modules_of_later_uses_unloaded",
        ),
        "the first %ollie command waits for pydantic though no notebook tool is called",
    ),
    Mutant(
        "first-command-loads-email",
        "ollie_nb/llm/_retry.py",
        "import asyncio\nimport time\n",
        "import asyncio\nimport email.utils\nimport time\n",
        (
            "tests/notebook/test_first_command_imports.py::test_the_first_status_leaves_the_modules_of_later_uses_unloaded",
        ),
        "the first %ollie command loads the email package for a Retry-After date never sent",
    ),
    Mutant(
        "first-command-loads-uuid",
        "ollie_nb/llm/_types.py",
        "import json\nimport re\n",
        "import json\nimport re\nimport uuid\n",
        (
            "tests/notebook/test_first_command_imports.py::test_the_first_status_leaves_the_modules_of_later_uses_unloaded",
        ),
        "the first %ollie command loads uuid and platform for a call id nobody writes",
    ),
    Mutant(
        "first-command-loads-package-metadata",
        "ollie_nb/core/_tracing.py",
        "import atexit\n",
        "import atexit\nfrom importlib import metadata  # noqa: F401\n",
        (
            "tests/notebook/test_first_command_imports.py::test_the_first_status_leaves_the_modules_of_later_uses_unloaded",
        ),
        "the first %ollie command reads package metadata (zipfile, csv, email) with tracing off",
    ),
    Mutant(
        "first-mcp-call-builds-iri-grammars",
        "ollie_nb/tools/_iri_syntax.py",
        "    defer_iri_grammars()\n    with _lock:\n",
        "    with _lock:\n",
        (
            "tests/tools/test_mcp_first_call.py::test_the_first_structured_result_is_checked_without_building_the_iri_grammars",
        ),
        "the first call of a stdio tool with an output schema takes seconds (jsonschema's IRI grammars)",
    ),
    Mutant(
        "first-mcp-call-loads-jsonschema",
        "ollie_nb/tools/_iri_syntax.py",
        "    loader.start()\n",
        "",
        (
            "tests/tools/test_mcp_first_call.py::test_the_first_structured_result_is_checked_without_building_the_iri_grammars",
        ),
        "the first call of a stdio tool with an output schema waits for jsonschema to load",
    ),
    Mutant(
        "iri-stand-in-passes-everything",
        "ollie_nb/tools/_iri_syntax.py",
        "    return bool(_real().is_valid_syntax(rule, value))\n",
        "    return True\n",
        (
            "tests/tools/test_mcp_first_call.py::test_the_first_structured_result_is_checked_without_building_the_iri_grammars",
        ),
        "jsonschema's iri format accepts any text once ollie_nb connected an MCP server",
    ),
    Mutant(
        "session-log-keeps-a-secret-learnt-later",
        "ollie_nb/core/_session_log.py",
        " and secrets <= self._secrets:\n",
        ":\n",
        (
            "tests/core/test_session_log.py::test_a_secret_known_after_its_line_was_written_is_masked_there_too",
        ),
        "a key that became known after its line was saved stays in clear in the session file",
        quick=True,
    ),
    Mutant(
        "inbox-answered-twice",
        "ollie_nb/tasks/_inbox.py",
        "WHERE id = ? AND answer IS NULL AND deadline",
        "WHERE id = ? AND deadline",
        (
            "tests/tasks/test_tasks_inbox.py::test_a_request_is_answered_once_and_each_change_is_an_event",
        ),
        "a second answer overwrites the first: a worker let through by one user is denied by another",
        quick=True,
    ),
    Mutant(
        "inbox-answered-after-its-deadline",
        "ollie_nb/tasks/_inbox.py",
        'AND answer IS NULL AND deadline > {store.dialect.clock}",',
        'AND answer IS NULL",',
        (
            "tests/tasks/test_tasks_inbox.py::test_an_unanswered_request_expires_and_takes_no_answer",
        ),
        "an answer after the timeout is recorded though the asker already took it as denied",
        quick=True,
    ),
    Mutant(
        "inbox-answered-event-not-logged",
        "ollie_nb/tasks/_inbox.py",
        '            store._event(conn, now, "inbox.answered", row.step or row.goal, payload)\n',
        "",
        (
            "tests/tasks/test_tasks_inbox.py::test_a_request_is_answered_once_and_each_change_is_an_event",
        ),
        "a board or a waiter following the event log never learns that a request was answered",
        quick=True,
    ),
    Mutant(
        "inbox-answer-not-the-http-user",
        "ollie_nb/tasks/_inbox.py",
        "    return name or user\n",
        "    return name\n",
        ("tests/tasks/test_tasks_inbox.py::test_over_http_the_answer_records_the_tokens_user",),
        "over HTTP an answer records no user, so a worker limited to named users denies it",
    ),
    Mutant(
        "client-reads-one-inbox-page",
        "ollie_nb/planning/_client.py",
        "            found.extend(rows)\n            if not cursor:\n                break\n",
        "            found.extend(rows)\n            break\n",
        ("tests/planning/test_inbox_client.py::test_many_requests_are_read_page_after_page",),
        "a kernel's inbox shows only the oldest 100 requests; newer ones are never answered",
    ),
    Mutant(
        "waiter-does-not-wait",
        "ollie_nb/planning/_client.py",
        "            if not rows or not rows[0].open:\n",
        "            if True:\n",
        (
            "tests/planning/test_inbox_client.py::test_a_request_asked_is_answered_elsewhere_and_its_waiter_sees_the_answer",
            "tests/core/test_worker_ask.py::test_a_parked_call_answered_allow_from_a_kernel_runs_and_the_step_finishes",
        ),
        "a worker with --ask denies each call at once instead of waiting for the answer",
    ),
    Mutant(
        "worker-ask-never-installed",
        "ollie_nb/core/_worker.py",
        "        if self.options.ask:\n            self._ask_the_inbox()\n",
        "",
        (
            "tests/core/test_worker_ask.py::test_a_parked_call_answered_allow_from_a_kernel_runs_and_the_step_finishes",
        ),
        "ollie-work --ask refuses calls that need approval as if --ask were not given",
    ),
    Mutant(
        "worker-ask-takes-anyones-answer",
        "ollie_nb/core/_worker_ask.py",
        "        if self.answers_from and row.answered_by not in self.answers_from:\n",
        "        if False:\n",
        (
            "tests/core/test_worker_ask.py::test_answers_from_others_than_the_named_users_are_denied",
        ),
        "a worker limited with --answers-from runs a call anyone allowed",
    ),
    Mutant(
        "kernel-sub-agents-ask-the-widget-only",
        "ollie_nb/core/_inbox_ask.py",
        "        if scope is None or not scope.asker or client is None or not client.caps.inbox:\n",
        "        if True:\n",
        (
            "tests/core/test_kernel_asks_inbox.py::test_a_sub_agents_call_answered_from_another_client_goes_on_and_closes_the_widget",
            "tests/core/test_kernel_asks_inbox.py::test_answered_in_the_widget_the_inbox_request_is_answered_by_the_kernels_user",
        ),
        "a sub-agent's approval waits for the kernel's widget alone: no board or teammate can answer it",
        quick=True,
    ),
    Mutant(
        "kernel-own-turn-asks-the-inbox",
        "ollie_nb/core/_inbox_ask.py",
        "        if scope is None or not scope.asker or client is None or not client.caps.inbox:\n",
        "        if client is None or not client.caps.inbox:\n",
        ("tests/core/test_kernel_asks_inbox.py::test_the_agents_own_turn_asks_only_in_the_widget",),
        "the prompt the user typed at the cell cannot ask for approval: its calls are denied",
        quick=True,
    ),
    Mutant(
        "store-without-inbox-asked-beside",
        "ollie_nb/core/_inbox_ask.py",
        "        if scope is None or not scope.asker or client is None or not client.caps.inbox:\n",
        "        if scope is None or not scope.asker or client is None:\n",
        (
            "tests/core/test_kernel_asks_inbox.py::test_a_store_without_an_inbox_asks_in_the_widget_alone",
        ),
        "with a task server that keeps no inbox, every sub-agent approval first tries an inbox that is not there",
        quick=True,
    ),
    Mutant(
        "widget-overrides-an-earlier-inbox-answer",
        "ollie_nb/core/_inbox_ask.py",
        '                if rows and rows[0].state == "answered":\n',
        "                if False:\n",
        (
            "tests/core/test_kernel_asks_inbox.py::test_a_widget_answer_after_an_inbox_answer_yields_to_it",
        ),
        "a teammate's Deny that reached the store first is overridden by a later Allow in the widget",
        quick=True,
    ),
    Mutant(
        "widget-answer-leaves-the-request-open",
        "ollie_nb/core/_inbox_ask.py",
        "        return await request.close(verdict.allowed, self._user())\n",
        "        return verdict.allowed\n",
        (
            "tests/core/test_kernel_asks_inbox.py::test_answered_in_the_widget_the_inbox_request_is_answered_by_the_kernels_user",
        ),
        "answered in the widget, the request stays open on every board until it expires",
        quick=True,
    ),
    Mutant(
        "sub-agent-asks-as-no-one",
        "ollie_nb/core/_subagents.py",
        "TurnStarted(prompt, step=self.work, asker=self.name)",
        "TurnStarted(prompt, step=self.work)",
        (
            "tests/core/test_kernel_asks_inbox.py::test_a_sub_agents_call_answered_from_another_client_goes_on_and_closes_the_widget",
        ),
        "a parallel run's sub-agents ask only in the kernel's widget, never in the inbox",
        quick=True,
    ),
    Mutant(
        "watch-asks-as-no-one",
        "ollie_nb/core/_turn_driver.py",
        'asker = WATCH_ASKER if item.origin is Origin.WATCH else ""',
        'asker = ""',
        (
            "tests/core/test_kernel_asks_inbox.py::test_a_watch_turns_call_is_asked_in_the_inbox_as_the_watch",
        ),
        "a step the watch took asks only in the kernel's widget, never in the inbox",
        quick=True,
    ),
    Mutant(
        "stopped-run-leaves-its-request-open",
        "ollie_nb/core/_inbox_ask.py",
        "            self._closing.add(asyncio.ensure_future(request.close(False, self._user())))\n",
        "",
        ("tests/core/test_kernel_asks_inbox.py::test_a_stopped_run_denies_its_open_request",),
        "after Stop every board still shows the stopped sub-agent's approval as waiting",
        quick=True,
    ),
    Mutant(
        "foreground-widget-says-denied-after-an-inbox-answer",
        "ollie_nb/notebook/_approval.py",
        '        concurrent.futures.wait(futures, timeout=left, return_when="FIRST_COMPLETED")\n'
        "    widget.settle_elsewhere()\n",
        '        concurrent.futures.wait(futures, timeout=left, return_when="FIRST_COMPLETED")\n',
        (
            "tests/notebook/test_subagent_asks_inbox_kernel.py::test_a_foreground_runs_widget_closes_when_the_cli_answers",
        ),
        "a foreground run's widget says 'no answer in time' for a call a teammate answered",
    ),
    Mutant(
        "widget-ignores-the-inbox-answer",
        "ollie_nb/notebook/_approval.py",
        "            found = _verdict_of(remote)\n",
        "            found = None\n",
        (
            "tests/notebook/test_subagent_asks_inbox_kernel.py::test_a_sub_agents_approval_answered_from_the_cli_lets_the_run_finish",
        ),
        "an approval answered on a board still waits for the widget, and is denied after the timeout",
    ),
    Mutant(
        "widget-stays-open-after-the-inbox-answer",
        "ollie_nb/notebook/_approval.py",
        "        closing.add_done_callback(lambda _: self.on_main(widget.settle_elsewhere))\n",
        "",
        (
            "tests/notebook/test_subagent_asks_inbox_kernel.py::test_a_sub_agents_approval_answered_from_the_cli_lets_the_run_finish",
        ),
        "the widget keeps asking a question a teammate answered already",
    ),
    Mutant(
        "background-run-hides-approvals",
        "ollie_nb/notebook/_parallel_widget.py",
        "        view.runtime.drain()\n",
        "",
        (
            "tests/notebook/test_subagent_asks_inbox_kernel.py::test_a_sub_agents_approval_answered_from_the_cli_lets_the_run_finish",
        ),
        "a --bg parallel run's sub-agent asks in no widget: its call is denied after the timeout",
    ),
    Mutant(
        "gate-hides-the-step-from-the-inbox",
        "ollie_nb/core/_routing.py",
        "answer = await self.approve.ask(name, shown, scope)",
        "answer = await self.approve.ask(name, shown, None)",
        (
            "tests/core/test_worker_ask.py::test_a_parked_call_answered_allow_from_a_kernel_runs_and_the_step_finishes",
        ),
        "a worker's request names no plan or step: the person answering cannot tell what it is for",
    ),
    Mutant(
        "cli-inbox-first-page-only",
        "ollie_nb/tasks/cli.py",
        "        while more:  # every page: a shell reads the whole inbox\n",
        "        while more and not rows:  # every page: a shell reads the whole inbox\n",
        ("tests/tasks/test_tasks_inbox.py::test_the_inbox_pages_with_next",),
        "`ollie-tasks inbox` shows the oldest 100 requests and hides the newer ones",
    ),
    Mutant(
        "model-trusted-to-answer-the-inbox",
        "ollie_nb/planning/_convention.py",
        "        TASK_DEP,\n    }\n)",
        "        TASK_DEP,\n        TASK_ANSWER,\n    }\n)",
        ("tests/reliability/test_inbox_trust.py",),
        "a model answers its own approval request on the task server without asking anyone",
        quick=True,
    ),
    Mutant(
        "worker-asks-a-store-without-an-inbox",
        "ollie_nb/core/_worker.py",
        '                "need approval are refused"\n            )\n            return\n',
        '                "need approval are refused"\n            )\n',
        (
            "tests/core/test_worker_ask.py::test_a_store_without_the_inbox_is_named_and_calls_are_refused_as_before",
        ),
        "a worker on a store without an inbox says it refuses, then tries to ask on every call",
    ),
    Mutant(
        "run-starts-before-its-blockers-workers-ended",
        "ollie_nb/core/_parallel_run.py",
        "return statuses.get(ids[j], unknown).unblocks and ids[j] not in working",
        "return statuses.get(ids[j], unknown).unblocks",
        (
            "tests/core/test_blocker_reports.py::test_a_step_starts_after_its_blockers_workers_have_reported",
        ),
        "a step of a parallel run starts while a blocker's sub-agent is still replying: its prompt "
        "lacks that blocker's report, and which sub-agent takes it depends on who finished first",
    ),
    Mutant(
        "first-command-loads-the-mcp-sdk",
        "ollie_nb/tools/_mcp.py",
        "from typing import Any, TextIO, TypeVar\n",
        "from typing import Any, TextIO, TypeVar\n\nimport httpx2\nimport mcp\n",
        (
            "tests/notebook/test_first_command_imports.py::test_the_first_status_loads_no_sdk_widget_or_task_store",
        ),
        "the first %ollie command in a fresh kernel waits for the MCP SDK no offline agent uses",
    ),
    Mutant(
        "first-command-loads-every-provider",
        "ollie_nb/llm/_settings.py",
        "if TYPE_CHECKING:  # a remote provider's module loads when that provider is made\n",
        "if True:\n",
        (
            "tests/notebook/test_first_command_imports.py::test_the_first_status_loads_no_sdk_widget_or_task_store",
        ),
        "the first %ollie command with the offline model loads the OpenAI, Anthropic and Ollama code",
    ),
    Mutant(
        "core-package-loads-every-module",
        "ollie_nb/core/__init__.py",
        "if TYPE_CHECKING:\n",
        "if True:\n",
        (
            "tests/core/test_core_package_imports.py::test_the_package_loads_a_module_when_one_of_its_names_is_first_used",
        ),
        "importing one name of ollie_nb.core loads the whole core, the llm and planning layers",
    ),
    Mutant(
        "llm-package-loads-every-provider",
        "ollie_nb/llm/__init__.py",
        "if TYPE_CHECKING:\n",
        "if True:\n",
        (
            "tests/core/test_core_package_imports.py::test_the_llm_package_loads_a_provider_when_it_is_used",
        ),
        "importing ollie_nb.llm for one type loads every provider's code",
    ),
    Mutant(
        "watched-plan-progress-never-told",
        "ollie_nb/core/_watch.py",
        'record.kind == "tasks" else None',
        'record.kind == "queue" else None',
        (
            "tests/core/test_watched_plan_progress.py::test_the_watch_tells_a_task_plans_progress_at_each_steps_start_and_end",
        ),
        "a plan the watch works shows a background header bar counting queue places, not its steps",
    ),
    Mutant(
        "watched-plan-progress-not-told-at-a-steps-end",
        "ollie_nb/core/_turn_driver.py",
        "        else:\n            self._told(await self.watch.ended(item), context.emit)\n        return result\n",
        "        return result\n",
        (
            "tests/core/test_watched_plan_progress.py::test_the_watch_tells_a_task_plans_progress_at_each_steps_start_and_end",
        ),
        "a watched plan's header bar lags a step behind: the last step done still shows 2 of 3",
    ),
    Mutant(
        "watched-step-not-shown-claimed-at-its-start",
        "ollie_nb/core/_watch.py",
        "{**known, item.step.step_id: StepState.IN_PROGRESS}",
        "known",
        (
            "tests/core/test_watched_plan_progress.py::test_the_watch_tells_a_task_plans_progress_at_each_steps_start_and_end",
        ),
        "a watched plan's graph shows the step being worked as still open",
    ),
    Mutant(
        "plan-editor-listens-after-its-widget-closed",
        "ollie_nb/notebook/_plan_editor.py",
        '        self.widget.observe(self._widget_closed, names="comm")\n',
        "",
        (
            "tests/notebook/test_plan_editor_release.py::test_closing_an_undecided_editors_widget_releases_its_listener",
        ),
        "each plan editor closed undecided keeps a listener on the core for the whole session",
        quick=True,
    ),
    Mutant(
        "board-holder-unescaped",
        "ollie_nb/planning/_board.py",
        'tds = "".join(f"<td>{html.escape(c)}</td>" for c in cells)',
        'tds = "".join(f"<td>{c}</td>" for c in cells)',
        ("tests/core/test_board.py::test_titles_and_holders_are_escaped",),
        "a holder or step title with markup runs as HTML in the board (a script in a task title)",
    ),
    Mutant(
        "board-lapsed-lease-shown-alive",
        "ollie_nb/planning/_board.py",
        "        if left is not None and left <= 0:",
        "        if left is not None and left < -3600:",
        ("tests/core/test_board.py::test_a_lapsed_lease_shows_as_lapsed_until_claimed_again",),
        "a step whose lease ran out shows as held by its worker with 0 s left, not as lapsed",
    ),
    Mutant(
        "board-forgets-lapsed-leases",
        "ollie_nb/planning/_board.py",
        "    if lapsed is not None and task.state.is_open:",
        "    if False:",
        ("tests/core/test_board.py::test_a_lapsed_lease_shows_as_lapsed_until_claimed_again",),
        "once the store reopens a lapsed step the board shows it plain open: nobody sees it was lost",
    ),
    Mutant(
        "board-mine-takes-any-prefix",
        "ollie_nb/planning/_board.py",
        '        return holder.startswith((f"{self.mine}@", f"{self.mine}/"))',
        "        return holder.startswith(self.mine)",
        ("tests/core/test_board.py::test_the_filters_pick_goal_holder_and_state",),
        "%ollie board --mine shows the plans of an agent whose name merely starts like this one's",
    ),
    Mutant(
        "board-redraws-per-event",
        "ollie_nb/core/_board_feed.py",
        "            await asyncio.sleep(self.gap)\n",
        "",
        ("tests/core/test_board.py::test_the_board_follows_another_process_at_a_bounded_rate",),
        "a burst of store events re-reads the store and redraws the board once per signal",
    ),
    Mutant(
        "board-not-redrawn-in-the-kernel",
        "ollie_nb/notebook/_board_widget.py",
        "                self.draw(newest)",
        "                pass",
        (
            "tests/notebook/test_board_kernel.py::test_the_board_shows_the_plans_and_follows_another_process",
        ),
        "the board shows the store as it was when opened: a step done elsewhere stays open on it",
    ),
    Mutant(
        "board-widget-redraws-every-board",
        "ollie_nb/notebook/_board_widget.py",
        "        if newest is not None and time.monotonic() - self.drawn_at >= GAP:",
        "        if newest is not None:",
        (
            "tests/notebook/test_board_widget.py::test_a_burst_of_boards_is_drawn_at_most_four_times_a_second",
        ),
        "the board's widget redraws for every board the feed posts, past 4 times a second",
        quick=True,
    ),
    Mutant(
        "board-graph-shrunk-to-fit",
        "ollie_nb/notebook/_board_widget.py",
        ".ollie-board .board-graph svg { max-width: none; height: auto; }",
        ".ollie-board .board-graph svg { max-width: 100%; height: auto; }",
        ("tests/browser/test_browser_board.py::test_board_side_opens_in_the_side_area",),
        "in JupyterLab's side panel the board's graphs shrink until their labels are unreadable",
    ),
    Mutant(
        "board-inbox-asker-unescaped",
        "ollie_nb/planning/_board.py",
        'tds = "".join(f"<td>{html.escape(cell)}</td>" for cell in cells)',
        'tds = "".join(f"<td>{cell}</td>" for cell in cells)',
        (
            "tests/notebook/test_board_inbox_widget.py::test_rows_are_escaped_and_carry_their_kind_of_buttons",
            "tests/core/test_board_inbox.py::test_a_request_asked_elsewhere_shows_on_the_board_until_answered",
        ),
        "an asker's name or a request's text with markup runs as HTML in the board's inbox",
    ),
    Mutant(
        "board-inbox-button-answers-wrong-id",
        "ollie_nb/planning/_board.py",
        """buttons.append(f'<button data-request="{rid}" data-answer=""",
        """buttons.append(f'<button data-request="{html.escape(request.goal)}" data-answer=""",
        (
            "tests/notebook/test_board_inbox_widget.py::test_rows_are_escaped_and_carry_their_kind_of_buttons",
            "tests/core/test_board_inbox.py::test_a_button_of_the_widget_answers_its_request",
        ),
        "pressing Allow on the board answers another request than the row's (or none)",
    ),
    Mutant(
        "board-inbox-answer-not-checked",
        "ollie_nb/notebook/_board_widget.py",
        "if self.answer is None or not request or not board_answer(word):",
        "if self.answer is None or not request:",
        (
            "tests/notebook/test_board_inbox_widget.py::test_a_button_message_answers_its_own_request_and_says_how_it_went",
        ),
        "any text a front end sends is given to the store as an answer (a raise of nothing)",
        quick=True,
    ),
    Mutant(
        "board-inbox-answer-outcome-dropped",
        "ollie_nb/notebook/_board_widget.py",
        "        while not self.notes.empty():\n            self._noted(self.notes.get_nowait())\n",
        "",
        (
            "tests/notebook/test_board_inbox_widget.py::test_a_button_message_answers_its_own_request_and_says_how_it_went",
        ),
        "a refused answer (answered already, timed out) leaves the board silent: the person thinks it went",
        quick=True,
    ),
    Mutant(
        "board-inbox-read-once",
        "ollie_nb/core/_board_feed.py",
        "            self._inbox = tuple(r for r in found if not goal or r.goal == goal)",
        "            self._inbox = self._inbox or tuple(r for r in found if not goal or r.goal == goal)",
        (
            "tests/core/test_board_inbox.py::test_a_request_asked_elsewhere_shows_on_the_board_until_answered",
        ),
        "a request answered elsewhere stays on the board with its buttons",
    ),
    Mutant(
        "board-inbox-click-sends-nothing",
        "ollie_nb/notebook/_board_widget.py",
        '    model.send({ kind: "answer", request: button.dataset.request, answer });\n',
        "",
        (
            "tests/browser/test_browser_board_inbox.py::test_an_inbox_row_is_clickable_and_its_answer_reaches_the_store",
        ),
        "pressing Allow on the board greys the button and nothing else: the worker waits on",
    ),
    Mutant(
        "board-closed-keeps-following",
        "ollie_nb/notebook/_board_widget.py",
        '        self.widget.observe(self._widget_closed, names="comm")\n',
        "",
        ("tests/notebook/test_board_widget.py::test_a_closed_board_stops_following",),
        "a board whose output was cleared keeps reading the store for the rest of the session",
        quick=True,
    ),
    Mutant(
        "retry-reopens-only-the-step",
        "ollie_nb/planning/_client.py",
        "    for current in order:\n        for task in tasks:",
        "    for current in order[:0]:\n        for task in tasks:",
        (
            "tests/core/test_step_retry.py::test_retry_steps_follows_waiting_steps_transitively_and_skips_done_and_worked_ones",
        ),
        "a retried step is reopened but the steps skipped or waiting after it stay closed",
        quick=True,
    ),
    Mutant(
        "retry-reopens-worked-steps",
        "ollie_nb/planning/_client.py",
        "            if task.state.unblocks or task.state.is_active:\n                continue\n",
        "",
        (
            "tests/core/test_step_retry.py::test_retry_steps_follows_waiting_steps_transitively_and_skips_done_and_worked_ones",
        ),
        "a retry reopens a step someone is working now, or one already done, after the failed one",
        quick=True,
    ),
    Mutant(
        "reopen-keeps-the-assignee",
        "ollie_nb/tasks/_store.py",
        "\"UPDATE tasks SET assignee = '', claim_token = NULL, lease_until = NULL, \"",
        '"UPDATE tasks SET assignee = assignee, claim_token = NULL, lease_until = NULL, "',
        (
            "tests/core/test_step_retry.py::test_the_store_reopens_a_failed_step_without_its_assignee_and_refuses_a_done_one",
        ),
        "a retried step still names the worker whose attempt failed as its holder",
        quick=True,
    ),
    Mutant(
        "reopen-takes-a-done-step",
        "ollie_nb/tasks/_store.py",
        '            if old_status in ("in_progress", "done"):',
        '            if old_status in ("in_progress",):',
        (
            "tests/core/test_step_retry.py::test_the_store_reopens_a_failed_step_without_its_assignee_and_refuses_a_done_one",
        ),
        "task_reopen undoes a finished step's work, opening it for a second run",
        quick=True,
    ),
    Mutant(
        "watch-ignores-retried-steps",
        "ollie_nb/core/_react.py",
        "                self.hooks.reopened(record.ids[index])",
        "                pass",
        ("tests/core/test_step_retry.py::test_the_watch_works_the_steps_a_retry_reopened",),
        "with the watch on, a retried step that a run or the agent took before is never worked",
    ),
    Mutant(
        "board-retry-button-unheard",
        "ollie_nb/notebook/_board_widget.py",
        '            self.retry(str(content.get("step") or ""))\n',
        "",
        (
            "tests/notebook/test_board_retry_kernel.py::test_the_retry_button_reopens_a_failed_step_and_those_after_it",
        ),
        "clicking Retry on the board's failed step does nothing",
    ),
    Mutant(
        "board-retry-message-misnamed",
        "ollie_nb/notebook/_board_widget.py",
        'model.send({ kind: "retry", step: retry.dataset.step });',
        'model.send({ kind: "reopen", step: retry.dataset.step });',
        (
            "tests/browser/test_browser_board_retry.py::test_retry_clicked_reopens_the_failed_step_and_those_after_it[lab]",
        ),
        "clicking Retry in the browser greys the button and nothing else: the step stays failed",
    ),
    Mutant(
        "board-front-end-not-redrawn",
        "ollie_nb/notebook/_board_widget.py",
        '  model.on("change:html", draw);\n',
        "",
        (
            "tests/browser/test_browser_board_retry.py::test_retry_clicked_reopens_the_failed_step_and_those_after_it[notebook7]",
        ),
        "the board in the browser stays as first drawn: a retried step still shows failed",
    ),
    Mutant(
        "board-esm-not-a-module",
        "ollie_nb/notebook/_board_widget.py",
        "export default { render };",
        "module.exports = { render };",
        (
            "tests/browser/test_browser_board_notebook7.py::test_the_board_shows_every_step_and_holder_in_notebook7",
        ),
        "in Notebook 7 the board's cell shows no board: its front end does not load",
    ),
    Mutant(
        "plan-retry-word-unknown",
        "ollie_nb/notebook/commands/plans.py",
        '    "retry": _plan_retry,\n',
        "",
        (
            "tests/notebook/test_plan_retry_magic.py::test_plan_retry_reopens_the_failed_step_and_those_waiting_on_it",
        ),
        "%ollie plan retry 1 2 fails instead of reopening the step",
    ),
    Mutant(
        "lazy-dir-only-loaded",
        "ollie_nb/_lazy.py",
        "        return sorted({*namespace, *names})\n",
        "        return sorted(namespace)\n",
        (
            "tests/core/test_core_package_imports.py::test_the_package_loads_a_module_when_one_of_its_names_is_first_used",
        ),
        "dir(ollie_nb.core) and tab completion miss every name not used yet",
    ),
    Mutant(
        "lazy-name-from-the-wrong-home",
        "ollie_nb/_lazy.py",
        "        value = getattr(importlib.import_module(module), name)\n",
        "        value = getattr(importlib.import_module(package), name)\n",
        (
            "tests/core/test_core_package_imports.py::test_the_package_loads_a_module_when_one_of_its_names_is_first_used",
        ),
        "from ollie_nb.core import Caps recurses instead of loading its module",
    ),
    Mutant(
        "watch-heartbeat-tells-no-progress",
        "ollie_nb/core/_watch.py",
        "            client.keep(step.task_id, assignee, lease, lost, self._progress_since())\n",
        "            client.keep(step.task_id, assignee, lease, lost)\n",
        (
            "tests/core/test_watch_progress.py::test_a_watched_steps_heartbeats_tell_its_spend_and_last_tool",
        ),
        "the board shows – for the spend and last tool of a step the kernel's watch works",
    ),
    Mutant(
        "watch-last-tool-not-kept",
        "ollie_nb/core/_watch.py",
        "        if isinstance(event, ToolCalled):\n            self.last_tool = event.tool\n",
        "",
        (
            "tests/core/test_watch_progress.py::test_a_watched_steps_heartbeats_tell_its_spend_and_last_tool",
        ),
        "the board shows no last tool for a step the kernel's watch works",
    ),
    Mutant(
        "cap-pause-untold-to-the-run",
        "ollie_nb/core/_core.py",
        "        if not self.runs.note(line):\n",
        "        if True:\n",
        (
            "tests/core/test_cap_ask_withdraw.py::test_a_kernels_parallel_run_tells_its_own_log_what_waits_at_its_cap",
        ),
        "a parallel run paused at its cap shows nothing in its cell: it seems to hang",
    ),
    Mutant(
        "cap-ask-not-withdrawn-on-stop",
        "ollie_nb/core/_cap_ask.py",
        "                asked.cancel()  # all who waited were stopped: the request is withdrawn\n",
        "                pass\n",
        (
            "tests/core/test_cap_ask_withdraw.py::test_a_run_stopped_at_its_cap_answers_its_request_stop",
        ),
        "a run stopped at its cap leaves its request open on every board until it times out",
    ),
    Mutant(
        "cap-ask-withdrawn-without-an-answer",
        "ollie_nb/core/_cap_ask.py",
        '            await client.answer(request, "stop")\n',
        "            pass\n",
        (
            "tests/core/test_cap_ask_withdraw.py::test_a_worker_stopped_while_it_waits_at_a_cap_withdraws_its_request",
        ),
        "a worker stopped at its cap leaves its request open until it times out",
    ),
    Mutant(
        "board-raise-by-one-by-default",
        "ollie_nb/planning/_board.py",
        "                f'placeholder=\"{RAISE_HINT}\">'\n",
        '                f\'value="1.00" placeholder="{RAISE_HINT}">\'\n',
        (
            "tests/notebook/test_board_inbox_widget.py::test_rows_are_escaped_and_carry_their_kind_of_buttons",
        ),
        "a click on Raise raises a token cap by one token and the work asks again at once",
        quick=True,
    ),
    Mutant(
        "board-raise-without-amount-unexplained",
        "ollie_nb/notebook/_board_widget.py",
        '        if word.startswith("raise:") and not board_answer(word):\n',
        "        if False:\n",
        (
            "tests/notebook/test_board_inbox_widget.py::test_a_raise_without_an_amount_is_not_sent_and_says_what_to_type",
        ),
        "a Raise with no amount typed says only that it is no answer the board gives",
        quick=True,
    ),
    Mutant(
        "worker-next-step-before-due-save",
        "ollie_nb/core/_subagents.py",
        "        self._parent().save_due()  # the last step's rounds reach the session file first\n",
        "",
        (
            "tests/core/test_round_saves.py::test_a_worker_given_its_next_step_makes_the_due_save_first",
        ),
        "a kernel that dies mid-run comes back without the rounds of a step its worker had done",
        quick=True,
    ),
    Mutant(
        "due-save-not-made",
        "ollie_nb/core/_conversation.py",
        "            self._due.cancel()\n            self._round_save()\n",
        "            pass\n",
        (
            "tests/core/test_round_saves.py::test_a_deferred_save_is_made_at_once_before_a_history_is_replaced",
            "tests/core/test_round_saves.py::test_a_worker_given_its_next_step_makes_the_due_save_first",
        ),
        "a worker's finished step is replaced before its rounds are saved",
        quick=True,
    ),
    Mutant(
        "due-save-left-scheduled",
        "ollie_nb/core/_conversation.py",
        "            self._due.cancel()\n            self._round_save()\n",
        "            self._round_save()\n",
        (
            "tests/core/test_round_saves.py::test_a_deferred_save_is_made_at_once_before_a_history_is_replaced",
        ),
        "a save made early is made again when its deferral fires",
        quick=True,
    ),
    Mutant(
        "cli-reopen-first-id-only",
        "ollie_nb/tasks/cli.py",
        "            for task_id in args.ids:\n",
        "            for task_id in args.ids[:1]:\n",
        (
            "tests/tasks/test_tasks_cli_reopen.py::test_reopen_opens_each_task_unassigned_and_notes_why",
        ),
        "`ollie-tasks reopen A B` reopens A and leaves B failed",
        quick=True,
    ),
    Mutant(
        "cli-reopen-refusal-hides-done",
        "ollie_nb/tasks/cli.py",
        "        if reopened:\n            _print_reopened(args, reopened)\n        raise\n",
        "        raise\n",
        (
            "tests/tasks/test_tasks_cli_reopen.py::test_reopen_stops_at_a_refusal_after_printing_what_it_reopened",
        ),
        "a reopen refused halfway does not say which tasks it already reopened",
        quick=True,
    ),
    Mutant(
        "retry-fallback-calls-missing-reopen",
        "ollie_nb/planning/_client.py",
        "        if not self.caps.reopen:\n",
        "        if False:\n",
        (
            "tests/core/test_step_retry_fallback.py::test_retry_without_task_reopen_reopens_with_task_update",
        ),
        "a retry on a task server without task_reopen fails instead of reopening the steps",
    ),
    Mutant(
        "retry-fallback-keeps-status",
        "ollie_nb/planning/_client.py",
        "            return await self.update(task_id, status=StepState.OPEN.value, note=note[:500])\n",
        "            return await self.update(task_id, note=note[:500])\n",
        (
            "tests/core/test_step_retry_fallback.py::test_retry_without_task_reopen_reopens_with_task_update",
        ),
        "a retry on a task server without task_reopen leaves the failed step failed",
    ),
    Mutant(
        "board-mine-ignores-token-user",
        "ollie_nb/notebook/commands/board.py",
        '    return (await client.whoami() if client is not None else "") or core.agent_name\n',
        "    return core.agent_name\n",
        ("tests/notebook/test_board_mine.py::test_mine_over_http_is_the_tokens_user",),
        "%ollie board --mine on a shared HTTP store shows no plan of the token's user",
    ),
    Mutant(
        "whoami-answers-nobody",
        "ollie_nb/tasks/server.py",
        '        return json.dumps({"user": _caller(ctx).user})\n',
        '        return json.dumps({"user": ""})\n',
        ("tests/notebook/test_board_mine.py::test_mine_over_http_is_the_tokens_user",),
        "task_whoami over HTTP does not name the token's user; --mine falls back to the agent",
    ),
    Mutant(
        "whoami-unseen",
        "ollie_nb/planning/_client.py",
        "            whoami=TASK_WHOAMI in schemas,\n",
        "            whoami=False,\n",
        (
            "tests/notebook/test_board_mine.py::test_mine_over_http_is_the_tokens_user",
            "tests/notebook/test_board_mine.py::test_mine_over_stdio_is_this_kernels_agent",
        ),
        "the kernel never asks ollie-tasks who its token is: --mine over HTTP shows nothing",
    ),
    Mutant(
        "inbox-wait-ignores-signals",
        "ollie_nb/planning/_client.py",
        "        if not self.following:\n            await asyncio.sleep(poll)\n",
        "        if True:\n            await asyncio.sleep(poll)\n",
        (
            "tests/planning/test_inbox_wait_signals.py::test_a_waiter_wakes_at_the_stores_signal_not_its_next_poll",
        ),
        "a worker parked on an approval sees the answer only at its next look (0.5 s later)",
    ),
    Mutant(
        "inbox-wait-signals-unwired",
        "ollie_nb/core/_tool_servers.py",
        '            updates=getattr(server, "resource_updates", None),\n',
        "            updates=None,\n",
        (
            "tests/planning/test_inbox_wait_signals.py::test_a_waiter_wakes_at_the_stores_signal_not_its_next_poll",
        ),
        "the wired task client never follows the store's signals while it waits for an answer",
    ),
    Mutant(
        "inbox-wait-poll-stalls",
        "ollie_nb/planning/_client.py",
        "            await asyncio.sleep(poll)\n            return\n",
        "            await asyncio.sleep(poll * 100)\n            return\n",
        ("tests/planning/test_inbox_wait_signals.py::test_without_signals_a_waiter_polls",),
        "on a server without signals a parked worker sees the answer seconds late",
    ),
    Mutant(
        "inbox-wait-never-looks-when-quiet",
        "ollie_nb/planning/_client.py",
        "            await asyncio.wait_for(self.signalled.wait(), min(left, QUIET_LOOK))\n",
        "            await asyncio.wait_for(self.signalled.wait(), left)\n",
        (
            "tests/planning/test_inbox_wait_signals.py::test_a_store_that_signals_nothing_is_looked_at_after_a_quiet_while",
        ),
        "on a store that does not watch other processes a parked worker sees an answer only at its timeout",
    ),
    Mutant(
        "legacy-unsubscribe-shared",
        "ollie_nb/tools/_mcp_signals.py",
        "        if alive() and not signals.open_count(uri):\n",
        "        if alive():\n",
        (
            "tests/tools/test_tools_mcp_shared_subscription.py::test_closing_one_of_two_streams_keeps_the_other_subscribed",
        ),
        "on a 2025-protocol server the watch goes deaf once a wait for an inbox answer ends",
    ),
    Mutant(
        "start-group-cancel-kills-leader-only",
        "ollie_nb/tools/_process.py",
        "        starting.add_done_callback(_kill_started)\n",
        "",
        (
            "tests/tools/test_tools_bounds.py::test_execute_code_cancelled_while_it_starts_kills_the_whole_group",
        ),
        "Ctrl-C while execute_code's shell starts leaves the command it forked running",
        quick=True,
    ),
    Mutant(
        "start-group-cancel-reaches-the-start",
        "ollie_nb/tools/_process.py",
        "        return await asyncio.shield(starting)\n",
        "        return await starting\n",
        (
            "tests/tools/test_tools_bounds.py::test_execute_code_cancelled_while_it_starts_kills_the_whole_group",
            "tests/core/test_tool_hooks.py::test_a_hook_cancelled_while_it_starts_takes_its_whole_group",
        ),
        "a cancelled start waits for the orphan's pipes (30 s) and leaves it running",
        quick=True,
    ),
    Mutant(
        "heartbeat-forgets-progress",
        "ollie_nb/tasks/_store.py",
        "            if not self._renew(conn, task_id, who, seconds, caller, progress):",
        "            if not self._renew(conn, task_id, who, seconds, caller):",
        (
            "tests/tasks/test_tasks_progress.py::test_a_heartbeat_keeps_the_told_progress_until_the_next_claim[sqlite]",
            "tests/core/test_step_progress.py::test_a_runs_heartbeats_tell_the_steps_spend_and_last_tool_to_another_client",
        ),
        "the board shows – for tokens, cost and last tool of every claimed step",
        quick=True,
    ),
    Mutant(
        "new-claim-keeps-old-progress",
        "ollie_nb/tasks/_store.py",
        'claim_token = ?, {CLEARED} "',
        'claim_token = ? "',
        (
            "tests/tasks/test_tasks_progress.py::test_a_heartbeat_keeps_the_told_progress_until_the_next_claim[sqlite]",
        ),
        "a step claimed again shows the spend and last tool of the claim before it",
        quick=True,
    ),
    Mutant(
        "progress-event-every-heartbeat",
        "ollie_nb/tasks/_store.py",
        "            if progress is not None and progress != before:",
        "            if progress is not None:",
        (
            "tests/tasks/test_tasks_progress.py::test_a_heartbeat_keeps_the_told_progress_until_the_next_claim[sqlite]",
        ),
        "every heartbeat adds an event to the log and wakes every board and worker",
        quick=True,
    ),
    Mutant(
        "progress-event-never-logged",
        "ollie_nb/tasks/_store.py",
        '                self._event(conn, _now(), "progress", task_id, told)',
        "                pass",
        (
            "tests/tasks/test_tasks_progress.py::test_a_heartbeat_keeps_the_told_progress_until_the_next_claim[sqlite]",
            "tests/core/test_step_progress.py::test_a_runs_heartbeats_tell_the_steps_spend_and_last_tool_to_another_client",
        ),
        "a board does not update when a step's spend grows; it waits for another write",
    ),
    Mutant(
        "task-list-progress-field-empty",
        "ollie_nb/tasks/server.py",
        '        told = format == "json" and "progress" in chosen',
        "        told = False",
        ("tests/tasks/test_tasks_progress.py::test_the_tools_take_and_give_the_progress",),
        "task_list's progress field is null for every claimed step",
    ),
    Mutant(
        "task-read-no-progress-line",
        "ollie_nb/tasks/_render.py",
        '        lines.append("progress: " + task.progress.line() + " (as its holder told)")',
        "        pass",
        ("tests/tasks/test_tasks_progress.py::test_the_tools_take_and_give_the_progress",),
        "task_read does not say a claimed step's tokens, cost and last tool",
    ),
    Mutant(
        "client-heartbeat-tells-nothing",
        "ollie_nb/planning/_client.py",
        "            args.update(progress.heartbeat_args())",
        "            pass",
        (
            "tests/core/test_step_progress.py::test_a_runs_heartbeats_tell_the_steps_spend_and_last_tool_to_another_client",
            "tests/core/test_step_progress.py::test_a_headless_workers_heartbeats_tell_its_steps_progress",
        ),
        "a parallel run's steps show – for tokens and last tool on every board",
    ),
    Mutant(
        "client-lists-no-progress",
        "ollie_nb/planning/_client.py",
        '            fields = (*fields, "progress")',
        "            fields = fields",
        (
            "tests/core/test_step_progress.py::test_a_runs_heartbeats_tell_the_steps_spend_and_last_tool_to_another_client",
            "tests/core/test_step_progress.py::test_a_told_tool_name_is_bounded_and_escaped_on_the_board",
        ),
        "the board shows – for tokens and last tool though the store keeps them",
    ),
    Mutant(
        "caps-progress-always",
        "ollie_nb/planning/_client.py",
        '            progress=_takes(schemas, TASK_HEARTBEAT, "tokens"),',
        "            progress=True,",
        (
            "tests/core/test_step_progress.py::test_an_older_servers_heartbeats_renew_as_before_and_the_board_shows_dashes",
        ),
        "against an older ollie-tasks the client sends arguments its heartbeat does not take",
    ),
    Mutant(
        "child-last-tool-unnoted",
        "ollie_nb/core/_subagents.py",
        "            self.last_tool = event.tool",
        "            pass",
        (
            "tests/core/test_step_progress.py::test_a_runs_heartbeats_tell_the_steps_spend_and_last_tool_to_another_client",
            "tests/core/test_step_progress.py::test_a_headless_workers_heartbeats_tell_its_steps_progress",
        ),
        "the board's last tool column stays – while a step calls tools",
    ),
    Mutant(
        "board-ignores-told-progress",
        "ollie_nb/planning/_board.py",
        "    return replace(held, spend=known, last_tool=told.last_tool)",
        "    return held",
        (
            "tests/core/test_step_progress.py::test_a_runs_heartbeats_tell_the_steps_spend_and_last_tool_to_another_client",
            "tests/core/test_step_progress.py::test_a_told_tool_name_is_bounded_and_escaped_on_the_board",
        ),
        "the board shows – for tokens, cost and last tool of every claimed step",
    ),
    Mutant(
        "told-tool-name-unbounded",
        "ollie_nb/planning/_progress.py",
        "    return text.strip()[:MAX_TOOL_CHARS].strip()",
        "    return text.strip()",
        (
            "tests/core/test_step_progress.py::test_a_told_tool_name_is_bounded_and_escaped_on_the_board",
        ),
        "a step whose tool has a long name loses its claim: the server refuses its heartbeats",
    ),
    Mutant(
        "cli-heartbeat-tells-nothing",
        "ollie_nb/tasks/cli.py",
        "    told = None if args.tokens is None else progress_of(args.tokens, args.cost, args.last_tool)",
        "    told = None",
        (
            "tests/tasks/test_tasks_progress.py::test_the_cli_heartbeat_tells_progress_and_show_says_it",
        ),
        "ollie-tasks heartbeat --tokens renews the lease but keeps no progress",
        quick=True,
    ),
    Mutant(
        "cap-not-asked",
        "ollie_nb/core/_model_gateway.py",
        "if asking is None or not await asking.settle(error, state.step):",
        "if True:",
        (
            "tests/core/test_worker_cap_ask.py::test_a_worker_at_its_plan_cap_asks_and_a_raise_from_a_kernel_finishes_the_plan",
            "tests/core/test_cap_ask_core.py::test_a_run_at_its_cap_pauses_and_a_raise_from_another_client_finishes_it",
        ),
        "a worker run with --ask stops at its cap as if nobody could be asked",
    ),
    Mutant(
        "cap-raise-not-applied",
        "ollie_nb/core/_cap_ask.py",
        "            ledger.raise_cap(error.kind, answer.amount)\n",
        "            pass\n",
        (
            "tests/core/test_cap_ask_core.py::test_a_run_at_its_cap_pauses_and_a_raise_from_another_client_finishes_it",
        ),
        "a cap answered raise:N asks again at once instead of going on",
    ),
    Mutant(
        "cap-asked-per-request",
        "ollie_nb/core/_cap_ask.py",
        "        if key not in self._asking:\n",
        "        if True:\n",
        (
            "tests/core/test_worker_cap_ask.py::test_two_steps_meeting_one_cap_ask_once_and_both_follow_the_answer",
        ),
        "two steps meeting one cap fill the inbox with a request each; one answer frees only one",
    ),
    Mutant(
        "cap-stop-forgotten",
        "ollie_nb/core/_cap_ask.py",
        "            ledger.stopped[error.kind] = error.cap\n",
        "            pass\n",
        ("tests/core/test_cap_ask_core.py::test_a_stop_answer_ends_the_run_as_without_asking",),
        "a run answered stop at its cap goes on asking instead of handing its steps back",
    ),
    Mutant(
        "run-stops-at-a-cap-it-would-ask",
        "ollie_nb/core/_parallel_run.py",
        "if error is None or self._will_ask(error):",
        "if error is None:",
        (
            "tests/core/test_worker_cap_ask.py::test_a_worker_at_its_plan_cap_asks_and_a_raise_from_a_kernel_finishes_the_plan",
            "tests/core/test_cap_ask_core.py::test_a_run_at_its_cap_pauses_and_a_raise_from_another_client_finishes_it",
        ),
        "a parallel run at its cap stops and hands its steps back without asking",
    ),
    Mutant(
        "worker-ask-not-at-caps",
        "ollie_nb/core/_worker.py",
        "asking.on, asking.log = True, self._log",
        "asking.log = self._log",
        (
            "tests/core/test_worker_cap_ask.py::test_a_worker_at_its_plan_cap_asks_and_a_raise_from_a_kernel_finishes_the_plan",
        ),
        "ollie-work --ask parks approvals but still stops at a cap",
    ),
    Mutant(
        "cap-answer-from-anyone",
        "ollie_nb/core/_cap_ask.py",
        "if answers_from and row.answered_by not in answers_from:",
        "if False:",
        ("tests/core/test_cap_answer.py::test_a_raise_from_someone_not_named_stops",),
        "ollie-work --ask --answers-from ann takes a raise from anyone",
        quick=True,
    ),
    Mutant(
        "ask-at-caps-trait-ignored",
        "ollie_nb/notebook/_state.py",
        "core.cap_ask.on = bool(traits and traits.ask_at_caps)",
        "core.cap_ask.on = False",
        (
            "tests/notebook/test_cap_ask_magics.py::test_the_trait_turns_asking_at_caps_on_at_start_and_off_while_running",
        ),
        "%config OllieMagics.ask_at_caps = True before the agent starts does nothing",
    ),
    Mutant(
        "run-ask-ignored",
        "ollie_nb/notebook/commands/plans.py",
        "        ctx.on_loop(lambda core: core.cap_ask.hold())\n",
        "        pass\n",
        ("tests/notebook/test_cap_ask_magics.py::test_run_ask_asks_at_caps_for_that_run_only",),
        "%ollie run --ask stops at a cap without asking",
    ),
    Mutant(
        "run-ask-never-released",
        "ollie_nb/notebook/commands/plans.py",
        "            release()\n",
        "            pass\n",
        ("tests/notebook/test_cap_ask_magics.py::test_run_ask_asks_at_caps_for_that_run_only",),
        "after one %ollie run --ask every later run asks at caps too",
    ),
    Mutant(
        "run-parallel-ask-ignored",
        "ollie_nb/notebook/_parallel_widget.py",
        "with core.cap_ask.during(ask):",
        "with core.cap_ask.during(False):",
        ("tests/notebook/test_cap_ask_magics.py::test_run_parallel_ask_asks_while_that_run_works",),
        "%ollie run --parallel N --ask stops at a cap without asking",
    ),
    Mutant(
        "cap-pause-untold",
        "ollie_nb/core/_core.py",
        "        self.emit(Notice(line))\n",
        "        pass\n",
        (
            "tests/core/test_cap_ask_core.py::test_a_turn_at_the_session_cap_waits_tells_the_cell_and_goes_on_when_raised",
        ),
        "a turn paused at a cap looks stuck: the cell never says it waits on the inbox",
    ),
    Mutant(
        "run-bg-ask-never-released",
        "ollie_nb/notebook/commands/plans.py",
        "            turn.future.add_done_callback(release)\n",
        "            pass\n",
        ("tests/notebook/test_cap_ask_magics.py::test_run_ask_asks_at_caps_for_that_run_only",),
        "after one %ollie run --bg --ask every later run asks at caps too",
    ),
)


def copy_tree(target: Path) -> None:
    """The files git knows (tracked and untracked, not ignored), as they are now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _write(path: Path, text: str) -> None:
    """Write a module and drop its cached bytecode (a same-size rewrite in the same second
    would otherwise be served stale); the other modules' caches are kept between runs."""
    path.write_text(text, encoding="utf-8")
    for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        cached.unlink()


def run_tests(tree: Path, tests: Sequence[str], timeout: float) -> tuple[bool, str]:
    """Run `tests` in the copy: (passed, the end of their output); a hang counts as failed."""
    # only the plugins the tests use: nbval (whose imports take seconds) runs the notebooks
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    command += ["-p", "anyio", "-p", "pytest_timeout", "-o", "addopts=", *tests]
    try:
        done = subprocess.run(
            command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return False, f"(the tests hung past {timeout:g} s)"
    return done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def run_mutant(mutant: Mutant, tree: Path, verbose: bool) -> str:
    """'killed', 'survived' or 'stale' (the snippet is not in the file exactly once)."""
    path = tree / mutant.file
    source = path.read_text(encoding="utf-8")
    if source.count(mutant.original) != 1:
        return "stale"
    _write(path, source.replace(mutant.original, mutant.mutated))
    try:
        passed, output = run_tests(tree, mutant.tests, TIMEOUT)
    finally:
        _write(path, source)
    if verbose or passed:
        print(output)
    return "survived" if passed else "killed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", help="run only these mutants")
    parser.add_argument("--quick", action="store_true", help="only the CI subset")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every test output")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip running the tests unmutated first"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="mutants run at once (default 1)"
    )
    args = parser.parse_args(argv)
    unknown = set(args.ids) - {m.id for m in MUTANTS}
    if unknown:
        parser.error(f"no mutant named {', '.join(sorted(unknown))} (see --list)")
    chosen = [
        m for m in MUTANTS if (not args.ids or m.id in args.ids) and (m.quick or not args.quick)
    ]
    if args.list:
        for m in chosen:
            print(f"{m.id}{' (quick)' if m.quick else ''}: {m.file}\n  {m.what}")
            for test in m.tests:
                print(f"  {test}")
        return 0
    results: dict[str, str] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ollie-mutants-") as tmp:
        trees = [Path(tmp) / f"tree{n}" for n in range(max(1, args.jobs))]
        for tree in trees:
            tree.mkdir()
            copy_tree(tree)
        if not args.no_baseline:  # a test that fails unmutated would "kill" every mutant
            tests = list(dict.fromkeys(t for m in chosen for t in m.tests))
            passed, output = run_tests(trees[0], tests, TIMEOUT * 2)
            print(f"baseline: the {len(tests)} covering tests {'pass' if passed else 'FAIL'}")
            if not passed:
                print(output)
                return 1
        free: queue.Queue[Path] = queue.Queue()
        for tree in trees:
            free.put(tree)

        def one(m: Mutant) -> None:
            tree = free.get()  # each copy holds one mutant at a time
            try:
                begun = time.monotonic()
                results[m.id] = run_mutant(m, tree, args.verbose)
                print(f"{results[m.id]:>8}  {m.id}  ({time.monotonic() - begun:.0f} s)", flush=True)
            finally:
                free.put(tree)

        with ThreadPoolExecutor(len(trees)) as pool:  # the work is in the tests' processes
            list(pool.map(one, chosen))
    bad = [i for i, r in results.items() if r != "killed"]
    print(
        f"{len(results) - len(bad)} of {len(results)} mutants killed "
        f"in {time.monotonic() - started:.0f} s"
        + (f"; not killed: {', '.join(bad)}" if bad else "")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
