"""`search`: linear-time regex over transcripts (docs/search.md)."""

from .api import SearchRun, search
from .types import COUNT_BY, Hit, Opener, Query, Summary

__all__ = ["COUNT_BY", "Hit", "Opener", "Query", "SearchRun", "Summary", "search"]
