"""One loop for the per-session exports (chunks, markdown, html): fingerprint the reading, skip it
when its export is current, else write a new version atomically and record it in the ledger."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..providers.base import Provider, SessionRef
from . import keep


@dataclass
class Outcome:
    ref: SessionRef
    status: str
    """``written`` (a new version), ``current`` (already exported, file intact), ``failed``."""
    path: Path | None = None
    version: int | None = None
    supersedes: str | None = None
    fingerprint: str | None = None
    fingerprint_kind: str | None = None
    reader_version: str | None = None
    why: str | None = None
    facts: dict = field(default_factory=dict)
    entry: dict | None = None


Writer = Callable[[Provider, SessionRef, Path, dict], dict]
"""write(provider, ref, dest, reading) -> facts (counts, omissions) recorded in the ledger's extra."""


def export_each(pairs: Iterable[tuple[Provider, SessionRef]], *, fmt: str, schema: int, module_file: str,
                out_dir: Path, suffix: str, write: Writer, force: bool = False,
                subdir: str | None = None) -> Iterator[Outcome]:
    """Each session exported to ``out_dir/<subdir or fmt>/<provider>/<version name>``."""
    out_dir = Path(out_dir)
    for prov, ref in pairs:
        try:
            fp, how = keep.session_fingerprint(prov, ref)
            if fp is None:
                fp = keep.rows_fingerprint(prov, ref)
            rv = keep.reader_version(prov, fmt, schema, module_file)
        except Exception as exc:  # noqa: BLE001 - one session's failure is reported, not fatal
            yield Outcome(ref, "failed", why=f"fingerprint failed: {type(exc).__name__}: {exc}")
            continue
        if not force:
            e = keep.up_to_date(ref.provider, ref.session_id, fmt, fp, rv, out_dir)
            if e is not None:
                yield Outcome(ref, "current", Path(e["path"]), (e.get("extra") or {}).get("version"),
                              fingerprint=fp, fingerprint_kind=how, reader_version=rv, entry=e,
                              facts={k: v for k, v in (e.get("extra") or {}).items()
                                     if k not in ("version", "supersedes")})
                continue
        dest = out_dir / (subdir or fmt) / ref.provider / keep.version_name(ref.session_id, fp, rv, suffix)
        reading = {"fingerprint": fp, "fingerprint_kind": how, "reader_version": rv}
        try:
            facts = write(prov, ref, dest, reading)
        except Exception as exc:  # noqa: BLE001
            yield Outcome(ref, "failed", fingerprint=fp, reader_version=rv,
                          why=f"writing failed: {type(exc).__name__}: {exc}")
            continue
        if how == "fingerprint_v1":
            after, _ = keep.session_fingerprint(prov, ref)
            if after != fp:
                # the session grew while it was read: the export holds at least what fp covers
                facts["grew_while_reading"] = True
        k = keep.record_version(prov, ref, fmt, fp, rv, dest, out_dir, facts)
        yield Outcome(ref, "written", dest, k.version, k.supersedes, fp, how, rv, facts=facts, entry=k.entry)
