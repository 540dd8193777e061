"""`image`: inline images (IMG-001..015) with stable locators `L<line>i<n>`."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from ....errors import UsageError
from ....read.lines import read_records
from ..discover import Lane, Scope
from ..model import record as R

EXT = {"image/png": "png", "image/jpeg": "jpg", "image/jpg": "jpg", "image/gif": "gif", "image/webp": "webp"}
_HANDLE = re.compile(r"\[Image #(\d+)\]")


@dataclass
class Image:
    locator: str
    lane: Lane
    line: int
    index: int
    carrier: str                  # block | tool_result
    media_type: str | None
    source_kind: str | None
    size: int | None              # decoded bytes; None when undecodable / not base64
    sha256: str | None
    handle: int | None
    timestamp: str | None
    tool_use_id: str | None = None
    data: bytes | None = None
    occurrences: list[str] = field(default_factory=list)


def _img(b: dict) -> tuple[str | None, str | None, bytes | None]:
    src = b.get("source") if isinstance(b.get("source"), dict) else {}
    kind = src.get("type") if isinstance(src.get("type"), str) else None
    mt = src.get("media_type") if isinstance(src.get("media_type"), str) else None
    data = None
    if kind == "base64" and isinstance(src.get("data"), str):
        try:
            data = base64.b64decode(src["data"], validate=False)
        except (binascii.Error, ValueError):
            data = None
    return kind, mt, data


def lane_images(lane: Lane) -> list[Image]:
    out = []
    for ln, obj in read_records(lane.path):
        if b'"image"' not in ln.raw:
            continue
        n = 0
        direct = []
        for b in R.blocks_of(obj):
            if b.get("type") == "image":
                n += 1
                k, mt, d = _img(b)
                im = Image(f"L{ln.no}i{n}", lane, ln.no, n, "block", mt, k, len(d) if d is not None else None,
                           hashlib.sha256(d).hexdigest() if d is not None else None, None, obj.get("timestamp"), data=d)
                out.append(im)
                direct.append(im)
            elif b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                for c in b["content"]:
                    if isinstance(c, dict) and c.get("type") == "image":
                        n += 1
                        k, mt, d = _img(c)
                        out.append(Image(f"L{ln.no}i{n}", lane, ln.no, n, "tool_result", mt, k,
                                         len(d) if d is not None else None,
                                         hashlib.sha256(d).hexdigest() if d is not None else None, None,
                                         obj.get("timestamp"), str(b.get("tool_use_id")), data=d))
        if direct:
            text = " ".join(str(b.get("text")) for b in R.blocks_of(obj) if b.get("type") == "text")
            c = R.content_of(obj)
            if isinstance(c, str):
                text = c
            hs = [int(h) for h in _HANDLE.findall(text)]
            if len(hs) == len(direct):  # IMG-005: one marker per image block, in block order
                for im, h in zip(direct, hs):
                    im.handle = h
    return out


def images(scope: Scope, subagents: bool = True, dedup: bool = True) -> list[Image]:
    allim = []
    for s in scope.sessions:
        lanes = [scope.explicit_lanes[s.session_id]] if s.session_id in scope.explicit_lanes else s.lanes(subagents)
        for l in lanes:
            allim.extend(lane_images(l))
    if not dedup:
        return allim
    by: dict[str, Image] = {}
    order = []
    for im in allim:
        key = im.sha256 or f"{im.lane.path}:{im.locator}"
        prev = by.get(key)
        occ = (prev.occurrences if prev else []) + [f"{im.lane.display}:{im.locator}"]
        if prev is not None and im.handle is None and prev.handle is not None:
            im.handle = prev.handle
        im.occurrences = occ
        by[key] = im  # IMG-008: the latest occurrence is kept
        if key not in order:
            order.append(key)
    return [by[k] for k in order]


def select(ims: list[Image], ident: str) -> list[Image]:
    s = ident.strip()
    if re.fullmatch(r"L\d+i\d+", s):
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
            f"{im.lane.display}:{im.locator} ({im.media_type}, {im.size} B)" for im in hit),
            hint="pick one with --id L<line>i<n>")
    return hit


def write_out(ims: list[Image], out_dir: str) -> list[tuple[Image, str]]:
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    done = []
    for im in ims:
        if im.data is None:
            continue
        ext = EXT.get(im.media_type or "", (im.media_type or "bin/bin").split("/")[-1] or "bin")
        name = f"{im.lane.session_id[:8]}-{im.lane.lane_id if im.lane.is_subagent else 'main'}-{im.locator}.{ext}"
        p = d / name
        if p.exists():
            if p.read_bytes() == im.data:
                done.append((im, str(p)))
                continue
            raise UsageError(f"{p} exists with different content; refusing to overwrite")
        p.write_bytes(im.data)
        done.append((im, str(p)))
    return done
