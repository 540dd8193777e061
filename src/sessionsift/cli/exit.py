"""Named exit statuses (documented in docs/cli.md)."""

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    NO_MATCH = 1
    USAGE = 2
    INCOMPLETE = 3
    ERROR = 1
    TIMEOUT = 124
    INTERRUPTED = 130
