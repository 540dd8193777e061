"""The ``plans`` and ``images`` capabilities: what a provider answers `plan` and `image` with.

A question (sessionsift.files.plan, sessionsift.files.image) asks each provider in the selection
and never asks which agent it is. The defaults read the shared records:

- **plans**: a client that keeps its plan as a checklist through a tool (Codex CLI's
  ``update_plan``, Gemini CLI's ``write_todos``, opencode's ``todowrite``, Crush's ``todos``)
  names how to read one call in :meth:`Provider.plan_update`; the latest update that did not fail
  is the session's plan (:class:`Plan` ``kind: "checklist"``). A client that binds a plan file
  (Claude Code's plan mode) answers with its own implementation (``kind: "file"``).
- **images**: :meth:`Provider.record_images` gives the inline images a record holds (the bytes as
  the client wrote them, base64 or raw), one :class:`Image` each.

A provider whose client records neither declares it in ``Provider.lacks`` (``"plans"``,
``"images"``) with the reason, and the answer prints that reason.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field
from typing import Any

from .base import Problem, ReadReport, Record, SessionRef


@dataclass
class PlanUpdate:
    """One recorded update of a checklist plan (:meth:`Provider.plan_update`)."""

    steps: list[dict]
    """``[{"step", "status"}]`` in the client's order (its status words kept: ``pending``,
    ``in_progress``, ``completed``, ``cancelled``, ...)."""
    explanation: str | None = None


@dataclass
class Plan:
    """The plan a session keeps (`plan` row)."""

    provider: str
    session_id: str
    kind: str | None
    """``file`` (a plan file bound to the session), ``checklist`` (steps a tool recorded), None
    (nothing recorded)."""
    source: str | None
    """How it is bound: ``plan_mode``/``slug`` (a file), the tool name (a checklist), None."""
    is_subagent: bool = False
    parent_session_id: str | None = None
    line: int | None = None
    locator: str | None = None
    timestamp: str | None = None
    steps: list[dict] | None = None
    explanation: str | None = None
    updates: int | None = None
    """Checklist updates recorded (failed calls not counted); None for a file plan."""
    failed_updates: int = 0
    notes: list[str] = field(default_factory=list)
    file: Any = None
    """A file plan's binding (providers/claude/files/plan.py ``PlanBinding``), else None."""
    path: str | None = None
    """The plan file a record binds (another agent's plan mode: ``kind: "file"``), else None."""
    exists: bool | None = None
    """Whether :attr:`path` exists on disk now (None: no path)."""
    ref: SessionRef | None = None
    record: Record | None = None
    """The tool call of the binding checklist update."""


@dataclass
class Image:
    """One inline image a record holds."""

    locator: str
    """``L<line>i<n>`` (a deeper model's lane) or ``<record locator>i<n>``: n counts the images of
    the record, 1-based."""
    line: int | None
    carrier: str
    """``block`` (in a message) | ``tool_result`` (in a tool's output)."""
    media_type: str | None
    source_kind: str | None
    size: int | None
    sha256: str | None
    handle: int | None
    timestamp: str | None
    tool_use_id: str | None = None
    data: bytes | None = None
    occurrences: list[str] = field(default_factory=list)
    lane: Any = None
    """The lane (a deeper model's), or None."""
    ref: SessionRef | None = None
    record: Record | None = None
    path: str | None = None
    """The file the image was read from, where the client recorded one (an attachment's name)."""

    @property
    def session_id(self) -> str:
        return self.lane.session_id if self.lane is not None else self.ref.session_id  # type: ignore[union-attr]

    @property
    def where(self) -> str:
        """``<lane>:<locator>`` (or ``<session>:<locator>``): unique in an answer."""
        if self.lane is not None:
            return f"{self.lane.display}:{self.locator}"
        return f"{self.ref.session_id}:{self.locator}"  # type: ignore[union-attr]


@dataclass
class RecordImage:
    """An image as :meth:`Provider.record_images` finds it in a record."""

    carrier: str
    media_type: str | None
    data: str | bytes | None
    """base64 text (``source_kind`` ``base64``), raw bytes, or None (not on disk: a URL, a path)."""
    source_kind: str | None
    handle: int | None = None
    path: str | None = None


def decode(data: str | bytes | None) -> bytes | None:
    if data is None or isinstance(data, bytes):
        return data
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None


def data_url(url: str) -> tuple[str | None, str | None]:
    """(media type, base64 text) of a ``data:<type>;base64,<...>`` URL; (None, None) otherwise."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None, None
    head, sep, body = url.partition(",")
    if not sep or not head.endswith(";base64"):
        return None, None
    return head[5:-7] or None, body


@dataclass
class PlanAnswer:
    plans: list[Plan] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    reports: list[ReadReport] = field(default_factory=list)


@dataclass
class ImageAnswer:
    images: list[Image] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    reports: list[ReadReport] = field(default_factory=list)


def plans_from_records(prov, refs: list[SessionRef], audit: bool = False) -> PlanAnswer:
    """The default ``plans``: each session's checklist updates (:meth:`Provider.plan_update` on
    every tool call; a call whose result is an error changed nothing), the latest one binding."""
    out = PlanAnswer()
    for ref in refs:
        rep = ReadReport()
        pl = Plan(prov.name, ref.session_id, None, None, ref.is_subagent, ref.parent_session_id, ref=ref)
        pending: dict[str, tuple[Record, PlanUpdate]] = {}
        got: list[tuple[Record, PlanUpdate]] = []
        try:
            for r in prov.read(ref, rep, raw=True):
                if r.copy_of is not None:
                    continue
                if r.kind == "tool_call":
                    up = prov.plan_update(ref, r)
                    if up is None:
                        continue
                    if r.is_error is True:
                        pl.failed_updates += 1
                    elif r.call_id:
                        pending[r.call_id] = (r, up)
                        got.append((r, up))
                    else:
                        got.append((r, up))
                elif r.kind == "tool_result" and r.call_id in pending and r.is_error is True:
                    call, up = pending.pop(r.call_id)
                    got = [g for g in got if g[0] is not call]
                    pl.failed_updates += 1
        except Exception as exc:  # a reader's bug: this session is unreadable, the answer goes on
            out.problems.append(Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                        f"reader failed: {type(exc).__name__}: {exc}"))
        out.reports.append(rep)
        out.problems.extend(rep.problems)
        if got:
            r, up = got[-1]
            pl.kind, pl.source, pl.steps, pl.explanation = "checklist", r.tool_name, up.steps, up.explanation
            pl.line, pl.locator, pl.timestamp, pl.updates, pl.record = r.line, r.locator, r.instant, len(got), r
        else:
            pl.updates = 0
            pl.notes.append("no plan update recorded in this session")
        if pl.failed_updates:
            pl.notes.append(f"{pl.failed_updates} plan update(s) failed (the client refused them): not counted")
        out.plans.append(pl)
    return out


def images_from_records(prov, refs: list[SessionRef]) -> ImageAnswer:
    """The default ``images``: every inline image :meth:`Provider.record_images` finds in a record."""
    out = ImageAnswer()
    for ref in refs:
        rep = ReadReport()
        per: dict[str, int] = {}
        try:
            for r in prov.read(ref, rep, raw=True):
                if r.copy_of is not None:
                    continue
                for ri in prov.record_images(ref, r):
                    base = r.locator
                    per[base] = per.get(base, 0) + 1
                    d = decode(ri.data)
                    out.images.append(Image(
                        f"{base}i{per[base]}", r.line, ri.carrier, ri.media_type, ri.source_kind,
                        len(d) if d is not None else None, hashlib.sha256(d).hexdigest() if d is not None else None,
                        ri.handle, r.instant, r.call_id if ri.carrier == "tool_result" else None, d, ref=ref, record=r,
                        path=ri.path))
        except Exception as exc:  # a reader's bug: this session is unreadable, the answer goes on
            out.problems.append(Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                        f"reader failed: {type(exc).__name__}: {exc}"))
        out.reports.append(rep)
        out.problems.extend(rep.problems)
    return out
