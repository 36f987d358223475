"""Whose fault an exception is, as the notebook tells it (no kernel): usage, a service, a bug."""

from __future__ import annotations

import pytest

from ollie_nb.errors import NoPlanError, OllieError, OllieUsageError, ServiceError
from ollie_nb.llm import (
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMStreamError,
    MissingExtraError,
    ToolUseFailedError,
)
from ollie_nb.notebook._failures import failure_notice, usage_error
from ollie_nb.planning._client import TaskCallError

PROVIDER = "the chat provider failed"
SERVER = "the task server failed"


@pytest.mark.parametrize(
    ("exc", "source"),
    [
        (LLMStreamError("openai: the stream broke"), PROVIDER),
        (LLMConnectionError("openai: cannot reach http://h: refused"), PROVIDER),
        (LLMHTTPError("openai: HTTP 503: overloaded", status=503), PROVIDER),
        (ToolUseFailedError("groq: tool_use_failed"), PROVIDER),
        (TaskCallError("task_update: no such task 7"), SERVER),
    ],
)
def test_a_services_failure_is_its_fault_in_one_line(exc: ServiceError, source: str) -> None:
    assert isinstance(exc, ServiceError) and not isinstance(exc, OllieUsageError)
    assert usage_error(exc) is None
    text = failure_notice(exc).message
    assert text.startswith(f"{source}: {exc}") and "(not a bug: " in text
    assert exc.advice in text and "internal error" not in text


@pytest.mark.parametrize(
    "exc",
    [
        LLMConfigError("openai: OPENAI_API_KEY is not set"),
        MissingExtraError("anthropic", "anthropic", "anthropic"),
        NoPlanError("no plan yet"),
    ],
)
def test_settings_and_setup_stay_usage_lines(exc: OllieError) -> None:
    usage = usage_error(exc)
    assert usage is not None and str(usage) == f"%ollie: {exc}"


def test_a_refused_key_says_to_check_the_key() -> None:
    text = failure_notice(LLMHTTPError("openai: HTTP 401: bad key", status=401)).message
    assert "check the backend's API key and URL" in text and "not a bug" in text


def test_a_provider_error_is_still_caught_as_an_llm_error() -> None:
    with pytest.raises(LLMError):
        raise LLMStreamError("openai: the stream broke")
    assert issubclass(MissingExtraError, ImportError)
