"""Errors of the task store: one base class, messages written for the model and for people."""

from __future__ import annotations


class TaskError(Exception):
    """Base of every error the task store raises on purpose; its text says what to do."""


class UnknownTaskError(TaskError, LookupError):
    """A task id that does not exist (never created, or deleted)."""


class InvalidTaskError(TaskError, ValueError):
    """An argument the store refuses: empty or oversized text, bad status, task with children."""


class CycleError(TaskError):
    """A dependency or parent edge that would close a loop."""


class StoreError(TaskError):
    """The database itself is unusable: missing, locked for too long, or from a newer version."""
