"""The one error root of ollie_nb: OllieError, and the kinds every layer shares.

Importable from every layer (it imports nothing of the package). Three families sit
under the root:

- `OllieUsageError` and its kinds: not a bug. What was asked cannot be done as
  things stand (a turn is running, the agent has not started, there is no plan, an
  agent file or session is bad, a service is unreachable); the message is one line
  that says what to do. The notebook shows these as one UsageError line.
- `ServiceError` and its kinds: not a bug and not the user's input either. A service
  ollie_nb talks to (a chat provider, a task server) failed or misbehaved: a broken
  stream, a refused tool call, a failed task call. The notebook shows one line naming
  the service (`source`) and what to do (`advice`).
- every other OllieError (a plan backend that failed, bad plan arguments from the
  model, ...): reported where it happens; one that reaches the magics unhandled is a
  bug and is shown as one, with `%ollie debug` for the traceback.

The layers root their own kinds here: `ollie_nb.llm.LLMError` (a ServiceError; its
configuration kinds are usage errors as well),
`ollie_nb.planning.PlanBackendError`, `ollie_nb.tools.McpConnectError`, ... The task
server (`ollie_nb.tasks`) is a program of its own and keeps its own root, TaskError.
"""

from __future__ import annotations


class OllieError(Exception):
    """Base of every error ollie_nb raises on purpose; the message is one readable line."""


class OllieUsageError(OllieError):
    """Not a bug: the request cannot be met as things stand; the message says what to do."""


class ServiceError(OllieError):
    """A service outside ollie_nb failed or misbehaved: its fault, neither a bug nor a usage
    mistake; `source` names it and `advice` says what to do, for the one line shown."""

    source = "a service ollie_nb uses"
    advice = "try again in a moment"


class TaskServerError(ServiceError):
    """The task server answered a call with an error or did not answer."""

    source = "the task server"
    advice = "%ollie mcp shows its state; try again once it answers"


class AgentBusyError(OllieUsageError):
    """A turn or a parallel run is under way; the request waits for it (or `%ollie stop`)."""


class NotStartedError(OllieUsageError):
    """The agent (or the notebook's runtime) has not started, or was closed."""


class NoPlanError(OllieUsageError):
    """There is no plan yet, none matches, or the plan cannot be worked that way."""


class PlanReviewError(OllieUsageError):
    """A plan review request does not fit the plan: it is not held, is approved already, or
    the draft breaks a plan rule (the message names the problem)."""


class PlanDecidedError(PlanReviewError):
    """The plan was approved, sent back or discarded already (by code, a command or another
    editor): a second decision on it has nothing to decide."""


class StepRetryError(OllieUsageError):
    """A step cannot be retried: the plan has no such step, or it is done or in progress."""


class NoTaskServerError(OllieUsageError):
    """No task server is wired, or it lacks a tool the request needs."""


class ConfigError(OllieUsageError):
    """An agent config is unreadable or malformed; the message names the file and the key."""


class SessionError(OllieUsageError):
    """A saved session is missing, unreadable or corrupt; the message names the file."""


class UnavailableError(OllieUsageError):
    """Something outside the package is missing or failed (a chat provider, an MCP server,
    the dot program); the message names it and why."""
