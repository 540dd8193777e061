"""Named exit statuses (documented in docs/cli.md; tests/test_docs.py holds the table to this)."""

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    """Answered (a definitive zero included). Also: the reader closed the output pipe."""
    NO_MATCH = 1
    """Nothing matched, where that is meaningful."""
    USAGE = 2
    """Usage or target error (bad option, unknown label, missing target, no such record)."""
    INCOMPLETE = 3
    """Answered, but some inputs could not be read: counts are lower bounds."""
    ERROR = 4
    """An error while reading (a malformed line under --strict) or an internal error."""
    RECOVER_AT_RISK = 5
    """`recover`: every line is known, but a command since the last anchor may have changed it."""
    RECOVER_PARTIAL = 6
    """`recover`: some lines are known, some are gaps."""
    RECOVER_NONE = 7
    """`recover`: the transcripts name the file but hold none of its content."""
    RECOVER_DELETED = 8
    """`recover`: the file's last known state is deleted."""
    SECRETS_FOUND = 9
    """`audit secrets`: credentials were found (0 = looked everywhere, found none)."""
    TIMEOUT = 124
    INTERRUPTED = 130
