"""What an answer says about the index: how many transcripts came from it, were updated first, were
indexed now, or were scanned without it and why (the summary's `index` field, docs/json.md, and
one text line)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from . import config

HOWS = ("index", "appended", "built", "scanned")


@dataclass
class IndexReport:
    off: str | None = None
    """Why the index is off for this answer (None: on)."""
    counts: Counter = field(default_factory=Counter)
    why_scanned: Counter = field(default_factory=Counter)

    @classmethod
    def for_root(cls, data_root=None, index_off: str | None = None) -> "IndexReport":
        """The report of an answer over `data_root` whose scope says `index_off` (Scope.index_off)."""
        off = config.why_off(index_off)
        if off is None:
            from . import store  # (only when the index is on: a --no-index answer never loads it)

            if not store.usable_for(data_root):
                off = f"the index directory {store.cache_dir()} lies inside the data root {data_root}"
        return cls(off)

    @property
    def on(self) -> bool:
        return self.off is None

    def add(self, outcome) -> None:
        if outcome is None:
            self.counts["scanned"] += 1
            return
        self.counts[outcome.how] += 1
        if outcome.how == "scanned" and outcome.why:
            self.why_scanned[outcome.why] += 1

    def as_json(self) -> dict:
        from . import store

        return {"enabled": self.on, "off_reason": self.off, "from_index": self.counts["index"],
                "appended": self.counts["appended"], "built": self.counts["built"],
                "scanned": self.counts["scanned"],
                "scanned_why": dict(self.why_scanned) or None, "dir": str(store.root_dir())}

    def text(self) -> str | None:
        """One line, or None when there is nothing to say (no transcript read)."""
        if not sum(self.counts.values()):
            return None
        if not self.on:
            return f"index: off ({self.off}): {self.counts['scanned']} transcript(s) scanned"
        parts = []
        if self.counts["index"]:
            parts.append(f"{self.counts['index']} from the index")
        if self.counts["appended"]:
            parts.append(f"{self.counts['appended']} updated (only the bytes appended were read)")
        if self.counts["built"]:
            parts.append(f"{self.counts['built']} indexed now")
        if self.counts["scanned"]:
            why = "; ".join(f"{w}: {n}" for w, n in self.why_scanned.items())
            parts.append(f"{self.counts['scanned']} scanned without it" + (f" ({why})" if why else ""))
        return "index: " + ", ".join(parts)
