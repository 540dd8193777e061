"""One small error hierarchy. The library raises these and never prints or exits."""

from __future__ import annotations


class SessionsiftError(Exception):
    """Base of every error the library raises on purpose."""

    hint: str | None = None


class UsageError(SessionsiftError):
    """The caller asked for something malformed (exit 2)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


class TargetError(SessionsiftError):
    """A target could not be found or read (exit 2)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


class StoreError(SessionsiftError):
    """sessionsift's own store (the clean archive) cannot be written safely: nothing was written
    (exit 4). ``hint`` says how to recover."""


class MalformedLine(SessionsiftError):
    """A strict reading met a line that is not a JSON object."""

    def __init__(self, path: str, line: int, why: str):
        super().__init__(f"malformed transcript line: {path}:{line}: {why}")
        self.path = path
        self.line = line
        self.why = why


class NoSuchRecord(SessionsiftError):
    """An explicit record address resolved to nothing."""


def error_kind(exc: BaseException) -> str:
    """The stable name of an error's kind, as JSON summaries carry it (`error.kind`)."""
    if isinstance(exc, MalformedLine):
        return "malformed_line"
    if isinstance(exc, NoSuchRecord):
        return "no_such_record"
    if isinstance(exc, TargetError):
        return "target"
    if isinstance(exc, StoreError):
        return "store"
    if isinstance(exc, UsageError):
        return "usage"
    name = type(exc).__name__
    if name in ("UsageError", "BadParameter", "MissingParameter", "NoSuchOption", "BadOptionUsage",
                "BadArgumentUsage", "NoArgsIsHelpError"):
        return "usage"  # click's own usage errors
    if isinstance(exc, SessionsiftError):
        return "error"
    return "internal"
