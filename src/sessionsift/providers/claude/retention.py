"""Claude Code's own retention: when the client itself will delete a session's transcript.

Read out of the 2.1.258 binary (MISC-011; docs/clean.md "The client's own deletion"): at every start
the client sweeps every project dir of its data root and unlinks each transcript whose **mtime** is
older than ``now - cleanupPeriodDays`` days (default 30, minimum 1), with its ``<sid>/`` dir and its
siblings; there is no trash. ``cleanupPeriodDays`` is read off the merged settings, layered low to
high (PLAN-019): ``userSettings`` (``<data root>/settings.json``) < ``projectSettings``
(``<cwd>/.claude/settings.json``) < ``localSettings`` (``<git root or cwd>/.claude/settings.local.json``)
< ``flagSettings`` (``--settings``) < ``policySettings`` (``/etc/claude-code/managed-settings.json``
and ``managed-settings.d/*.json`` on Linux, plus server-delivered and parent-managed settings).

The project and local layers that apply are those of the directory the client is NEXT started in,
and that start sweeps every project: so the period is computed for a start in a directory with no
project settings of its own (``period_days``), and each session also says what a start in its own
project would apply. Invisible on disk, and said so: ``--settings``/``--setting-sources`` launch
flags (no trace anywhere, PLAN-020), server-delivered and parent-managed policy, the desktop app's
exemption (``transcriptsExemptedDesktop``), and the project settings of any other directory a
client may be started in. The client SKIPS its sweep when a settings file that could set the key
cannot be parsed, or when the key is set to an invalid value (``settings_unknowable`` /
``settings_invalid_key_set`` in 2.1.258): then no deletion date is projected, with that reason.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson

KEY = "cleanupPeriodDays"
DEFAULT_DAYS = 30
POLICY_DIR = Path("/etc/claude-code")
INVISIBLE = [
    "flagSettings: a --settings file or --setting-sources given at launch leaves no trace on disk",
    "policySettings delivered by a server (remote managed settings) or a parent process",
    "the desktop app's retention exemption (transcripts it released or kept)",
    "the project settings of whatever directory Claude Code is next started in (that start sweeps every project)",
]


@dataclass
class Layer:
    name: str
    path: str
    state: str
    """``absent`` | ``read`` | ``unparseable: <why>`` | ``invalid: <why>``."""
    value: int | None = None

    def to_json(self) -> dict:
        return {"layer": self.name, "path": self.path, "state": self.state, "value": self.value}


@dataclass
class Period:
    days: int | None
    """None: the client skips its sweep (``skipped`` says why) or the period is not known."""
    source: str
    layers: list[Layer] = field(default_factory=list)
    skipped: str | None = None

    def to_json(self) -> dict:
        return {"days": self.days, "source": self.source, "skipped": self.skipped,
                "layers": [l.to_json() for l in self.layers]}


def _layer(name: str, p: Path) -> Layer:
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return Layer(name, str(p), "absent")
    except OSError as exc:
        return Layer(name, str(p), f"unparseable: {exc.strerror or exc}")
    try:
        d = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError as exc:
        return Layer(name, str(p), f"unparseable: {exc}")
    if not isinstance(d, dict):
        return Layer(name, str(p), "unparseable: not a JSON object")
    if KEY not in d:
        return Layer(name, str(p), "read")
    v = d[KEY]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        return Layer(name, str(p), f"invalid: {KEY} = {v!r} (the client wants an integer >= 1)")
    return Layer(name, str(p), "read", v)


def _git_root(cwd: Path) -> Path | None:
    for d in [cwd, *cwd.parents]:
        if (d / ".git").exists():
            return d
    return None


def period(home: Path, cwd: str | None = None, policy_dir: Path | None = POLICY_DIR) -> Period:
    """The merged ``cleanupPeriodDays`` for a client start in ``cwd`` (None: a directory without
    project settings). ``policy_dir``: None = not read (say so)."""
    layers = [_layer("userSettings", home / "settings.json")]
    if cwd:
        c = Path(cwd)
        layers.append(_layer("projectSettings", c / ".claude" / "settings.json"))
        g = _git_root(c)
        local = (g if g is not None and g != Path.home() else c) / ".claude" / "settings.local.json"
        layers.append(_layer("localSettings", local))
    if policy_dir is not None:
        layers.append(_layer("policySettings", policy_dir / "managed-settings.json"))
        try:
            drop = sorted((policy_dir / "managed-settings.d").glob("*.json"))
        except OSError:
            drop = []
        layers += [_layer("policySettings", p) for p in drop]
    for l in layers:
        if l.state.startswith("unparseable"):
            return Period(None, "unknown", layers, f"settings_unknowable: {l.path} cannot be parsed; the client "
                                                    "skips its retention sweep while a settings file is unreadable")
        if l.state.startswith("invalid"):
            return Period(None, "unknown", layers, f"settings_invalid_key_set: {l.path}: {l.state[9:]}; the client "
                                                    "skips its retention sweep")
    policy = [l for l in layers if l.name == "policySettings" and l.value is not None]
    if policy:
        l = policy[-1]
        return Period(l.value, f"policySettings ({l.path})", layers)
    days, src = DEFAULT_DAYS, "default"
    for l in layers:
        if l.value is not None:
            days, src = l.value, f"{l.name} ({l.path})"
    return Period(days, src, layers)


@dataclass
class Projection:
    period: Period
    mtime: float | None
    deletion_at: datetime | None
    due: bool | None
    """True: past the cutoff now (deleted at the client's next start)."""
    project_period: Period | None = None
    note: str | None = None

    def to_json(self) -> dict:
        pp = self.project_period
        return {"period_days": self.period.days, "period_source": self.period.source,
                "skipped": self.period.skipped,
                "transcript_mtime": _iso(self.mtime) if self.mtime is not None else None,
                "projected_deletion": self.deletion_at.strftime("%Y-%m-%dT%H:%M:%SZ") if self.deletion_at else None,
                "due_at_next_start": self.due,
                "own_project_period_days": pp.days if pp is not None and pp.source != self.period.source else None,
                "own_project_period_source": pp.source if pp is not None and pp.source != self.period.source else None,
                "note": self.note}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def project(transcript: Path, base: Period, own: Period | None, now: datetime) -> Projection:
    """When the client will delete this transcript (its mtime + the period)."""
    try:
        mt = os.stat(transcript).st_mtime
    except OSError:
        return Projection(base, None, None, None, own, "transcript not stat-able")
    if base.days is None:
        return Projection(base, mt, None, None, own, base.skipped)
    at = datetime.fromtimestamp(mt, timezone.utc) + timedelta(days=base.days)
    return Projection(base, mt, at, at <= now, own)


class Rules:
    """Claude Code's retention as its reader's capability (``Provider.retention``): the period a
    client start applies, each transcript's projected deletion, and what its disk cannot show."""

    invisible = INVISIBLE

    def reads_policy(self, root_source: str) -> bool:
        """Whether the machine's policy layer applies to a data root found this way: the client's
        own default root or ``CLAUDE_CONFIG_DIR`` (a root named explicitly is a corpus, not this
        machine's client)."""
        return root_source in ("default", "CLAUDE_CONFIG_DIR")

    def period(self, root: Path, cwd: str | None = None, policy: bool = True) -> Period:
        return period(root, cwd, POLICY_DIR if policy else None)

    def project(self, transcript: Path, base: Period, own: Period | None, now: datetime) -> Projection:
        return project(transcript, base, own, now)
