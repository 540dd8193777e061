"""`image`: the inline images every agent's sessions hold, with stable locators (docs/files.md).

:func:`images` asks each provider in the selection for its images (the ``images`` capability,
providers/artifacts.py): the bytes the client wrote inline (a prompt's attachment, a tool's image
output). Deduplicated by the sha256 of the decoded bytes, the latest occurrence kept (IMG-008).
A provider that reads none says why (``Provider.lacks["images"]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

EXT = {"image/png": "png", "image/jpeg": "jpg", "image/jpg": "jpg", "image/gif": "gif", "image/webp": "webp"}


@dataclass
class ImageResult:
    sel: Any
    images: list = field(default_factory=list)
    """providers/artifacts.py ``Image`` rows."""
    lacks: dict[str, str] = field(default_factory=dict)
    problems: list = field(default_factory=list)


def images(sel, dedup: bool = True) -> ImageResult:
    """Every inline image of the selection's sessions (without subagents' when the selection is
    made without them: ``Selection.subagents``)."""
    out = ImageResult(sel)
    counts = sel.counts()
    allim = []
    for e in sel.survey.entries:
        if e.provider is None:
            continue
        got = e.provider.images(sel)  # `--no-subagents`: the selection says so (Selection.subagents)
        if got is None:
            if counts.get(e.name):
                out.lacks[e.display] = type(e.provider).lacks.get(
                    "images", "its reader reads no inline image (Provider.record_images)")
            continue
        allim.extend(got.images)
        out.problems.extend(got.problems)
    out.images = _dedup(allim) if dedup else allim
    return out


def _dedup(allim: list) -> list:
    by: dict[str, Any] = {}
    order: list[str] = []
    for im in allim:
        key = im.sha256 or f"{im.session_id}:{im.where}"
        prev = by.get(key)
        occ = (prev.occurrences if prev else []) + [im.where]
        if prev is not None and im.handle is None and prev.handle is not None:
            im.handle = prev.handle
        im.occurrences = occ
        by[key] = im  # IMG-008: the latest occurrence is kept
        if key not in order:
            order.append(key)
    return [by[k] for k in order]


def select(ims: list, ident: str) -> list:
    s = ident.strip()
    if re.fullmatch(r"\S+i\d+", s) and not s.lstrip("#").isdigit():
        hit = [im for im in ims if im.locator == s or any(o.endswith(":" + s) for o in im.occurrences)]
        if not hit:
            raise UsageError(f"no image at {s}")
        return hit
    h = s.lstrip("#")
    if not h.isdigit():
        raise UsageError(f"--id {ident!r}: expected N (an [Image #N] handle) or L<line>i<n>")
    hit = [im for im in ims if im.handle == int(h)]
    if not hit:
        raise UsageError(f"no image carries the handle [Image #{h}]")
    if len(hit) > 1:  # IMG-006: handles are reused across prompts
        raise UsageError(f"[Image #{h}] is ambiguous: " + ", ".join(
            f"{im.where} ({im.media_type}, {im.size} B)" for im in hit),
            hint="pick one with --id L<line>i<n>")
    return hit


def write_out(ims: list, out_dir: str) -> list[tuple[Any, str]]:
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    done = []
    for im in ims:
        if im.data is None:
            continue
        ext = EXT.get(im.media_type or "", (im.media_type or "bin/bin").split("/")[-1] or "bin")
        lane = (im.lane.lane_id if im.lane.is_subagent else "main") if im.lane is not None else \
            (im.record.lane if im.record is not None else "main")
        loc = im.locator.replace("#", "-").replace(":", "-").replace("/", "-")
        name = f"{im.session_id[:8]}-{lane}-{loc}.{ext}"
        p = d / name
        if p.exists():
            if p.read_bytes() == im.data:
                done.append((im, str(p)))
                continue
            raise UsageError(f"{p} exists with different content; refusing to overwrite")
        p.write_bytes(im.data)
        done.append((im, str(p)))
    return done
