"""BYTES -> records: framing of JSONL transcripts (mmap, NUL runs, torn tails, bad UTF-8)."""

from .lines import Line, ReadStats, iter_lines, parse_line, read_records

__all__ = ["Line", "ReadStats", "iter_lines", "parse_line", "read_records"]
