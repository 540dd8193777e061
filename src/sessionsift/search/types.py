"""The query of `search` (defined with the capability interface: providers/searchquery.py)."""

from ..providers.searchquery import COUNT_BY, Query, merge_counts

__all__ = ["COUNT_BY", "Query", "merge_counts"]
