"""Claude Code's inline images with stable locators `L<line>i<n>` (the ``images`` capability).

The bytes are the ones the client wrote inline: a `{type:"image"}` content block of a record, or an
image nested in a `tool_result` block's content (the content block is authoritative; the
`toolUseResult.file.base64` echo is not read: IMG-013). `n` counts the images of the line, 1-based.
A prompt's `[Image #N]` markers name its direct image blocks one for one, in block order (IMG-005);
the same handle is reused across prompts (IMG-006), so a handle alone may be ambiguous.
Deduplication by the sha256 of the decoded bytes keeps the latest occurrence (IMG-008).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from ....read.lines import read_records
from ...artifacts import Image as _Image
from ..discover import Lane, Scope
from ..model import record as R

_HANDLE = re.compile(r"\[Image #(\d+)\]")


def Image(locator, lane, line, index, carrier, media_type, source_kind, size, sha256, handle, timestamp,
          tool_use_id=None, data=None):
    """An image of a lane (providers/artifacts.py ``Image``; `index`: its place in the line, in the locator)."""
    return _Image(locator, line, carrier, media_type, source_kind, size, sha256, handle, timestamp, tool_use_id,
                  data, lane=lane)


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
