"""A task_claim_next answer as the agent reads it: the step's id, its token kept, never shown."""

from __future__ import annotations

from ollie_nb.planning import HeldClaims, without_tokens
from ollie_nb.planning._client import next_claimed

ANSWER = (
    "claimed: t-7kq2m  [in_progress]  Chore @w1, lease ends 2026-01-01T00:00:00Z\n"
    "id: t-7kq2m\n"
    "token: s3cret\n"
    "lease: 60 s"
)


def test_a_claim_next_answer_names_its_step_and_its_token_is_held() -> None:
    held = HeldClaims()
    held.answered("task_claim_next", {"assignee": "w1", "parents": ["t-goal1"]}, True, ANSWER)
    claim = held.get("t-7kq2m")
    assert next_claimed(ANSWER) == "t-7kq2m"
    assert claim is not None and (claim.token, claim.lease) == ("s3cret", 60.0)
    assert "s3cret" not in without_tokens(ANSWER)  # what a model may read


def test_a_none_answer_names_no_step() -> None:
    held = HeldClaims()
    none = "none: no step of these goals is ready and unclaimed"
    held.answered("task_claim_next", {"assignee": "w1"}, True, none)
    assert next_claimed(none) == "" and repr(held) == "HeldClaims([])"
