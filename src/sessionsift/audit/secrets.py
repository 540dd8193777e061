"""`audit secrets`: credentials that landed in transcripts (docs/audit.md "audit secrets").

Detection is Yelp's detect-secrets, used as a library on text (``detect_secrets.core.scan.
scan_line`` with its own plugins and false-positive filters): AWS keys, GitHub/GitLab tokens,
private keys, passwords in URLs (basic auth), secret-named assignments (``PASSWORD=...`` in an
environment dump), JWTs, Slack, Stripe, OpenAI, npm, PyPI, SendGrid, Twilio, ... tokens. Its two
entropy detectors are off by default (every transcript is full of ids, hashes, base64 images and
signatures: they flag those) and on with ``entropy=True``.

detect-secrets is written for source files and is slow per line (about 0.4 ms), so every string
is first tested against ONE RE2 union of the enabled plugins' own patterns, relaxed so it matches
a superset (lookarounds removed, case folded): only lines it matches go to detect-secrets. The
prefilter can only add candidates, never lose one (tests hold the two equal on real transcripts).

What is scanned: every string of every record (a line's JSON, a database row) except binary
payloads (base64 images and documents, thinking signatures, encrypted reasoning), each with its
field path (``message.content[0].content``, ``toolUseResult.stdout``, ``payload.output``). The
same secret stored in two fields is two findings (it is stored twice).

A finding carries the locator, the field, the detector's type, a masked preview (the first
characters and the length, never the secret), and ``hashed_secret`` -- the SHA-1 of the secret,
as detect-secrets hashes secrets in its baselines -- so a user can list known false positives
(:func:`load_allowlist`). Verification (plugins that send a secret to its provider's API to see
whether it is live) is never enabled.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import orjson

from ..providers.base import Problem, Provider, ReadReport, SessionRef

NOISY = ("Base64HighEntropyString", "HexHighEntropyString")
"""Entropy detectors: off unless asked for (ids, hashes and base64 payloads trip them)."""
NOT_CREDENTIALS = ("IPPublicDetector",)
"""A public IP address is not a credential."""
MIN_STRING = 8
ALLOWLIST_NAME = "secrets-allowlist.txt"


@dataclass(frozen=True)
class Hit:
    """One secret found in one text: where, which detector, its hash (never the value kept)."""

    start: int
    end: int
    type: str
    hashed_secret: str
    preview: str


@dataclass
class Finding:
    provider: str
    session_id: str
    locator: str
    field: str
    path: str | None
    type: str
    hashed_secret: str
    preview: str
    line: int | None = None
    instant: str | None = None
    parent_session_id: str | None = None


@dataclass
class SecretsResult:
    findings: list[Finding] = field(default_factory=list)
    allowlisted: int = 0
    sessions: int = 0
    """Every session scanned (file or row): top-level and child sessions."""
    child_sessions: int = 0
    """Of ``sessions``, other providers' child sessions (rows of their own)."""
    strings: int = 0
    candidates: int = 0
    reports: list[tuple[SessionRef, ReadReport]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


# -- the detector ------------------------------------------------------------------------------


def _strip_lookarounds(p: str) -> str:
    """The pattern without its lookaround groups (a superset of what it matches)."""
    out = []
    i = 0
    n = len(p)
    while i < n:
        c = p[i]
        if c == "\\":
            out.append(p[i:i + 2])
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < n and p[j] == "^":
                j += 1
            if j < n and p[j] == "]":
                j += 1
            while j < n and p[j] != "]":
                j += 2 if p[j] == "\\" else 1
            out.append(p[i:j + 1])
            i = j + 1
            continue
        if p.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            depth = 0
            j = i
            while j < n:
                if p[j] == "\\":
                    j += 2
                    continue
                if p[j] == "[":
                    k = j + 1
                    while k < n and p[k] != "]":
                        k += 2 if p[k] == "\\" else 1
                    j = k + 1
                    continue
                if p[j] == "(":
                    depth += 1
                elif p[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _clamp_repeats(p: str) -> str:
    """RE2 refuses repetition counts over 1000: ``{a,b}`` with b > 1000 becomes ``{a,}``."""
    return re.sub(r"\{(\d+),(\d+)\}", lambda m: m.group(0) if int(m.group(2)) <= 1000 else "{%s,}" % m.group(1), p)


def _backrefs_to_any(p: str) -> str:
    """RE2 has no back-references: ``\\1`` becomes "any quote character" (a superset for the
    keyword detector, whose back-references repeat an opening quote)."""
    return re.sub(r"\\[1-9]", lambda m: "[\"'`]?", p)


class Detector:
    """detect-secrets with an RE2 prefilter. Build once (``detector()``), reuse."""

    def __init__(self, entropy: bool = False):
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins import keyword as K

        skip = set(NOT_CREDENTIALS) | (set() if entropy else set(NOISY))
        # typed Any: detect_secrets' own annotation makes mypy's answer depend on its cache
        # (type[Never] in one run, not in the next: the architecture check's count flickered 2/3)
        mapping: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
        self.plugin_names = sorted(c.__name__ for c in mapping.values() if c.__name__ not in skip)
        self.entropy = entropy
        pats: list[str] = []
        self._plugin_regexes: dict[str, list[re.Pattern]] = {}
        for c in mapping.values():
            if c.__name__ not in self.plugin_names:
                continue
            if c.__name__ == "KeywordDetector":
                self._plugin_regexes[c.secret_type] = [
                    r for d in (K.CONFIG_DENYLIST_REGEX_TO_GROUP, K.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
                    for r in d]
                # every keyword pattern is built on one of these words (keyword.py DENYLIST)
                pats.append("(?i:" + "|".join(K.DENYLIST) + ")")
                continue
            try:
                regs = list(getattr(c(), "denylist", ()) or ())
            except TypeError:
                regs = []
            self._plugin_regexes[c.secret_type] = regs
            for r in regs:
                q = r.pattern
                if r.flags & re.VERBOSE:
                    q = re.sub(r"\s+|#[^\n]*", "", q)
                pats.append(("(?i:%s)" if r.flags & re.IGNORECASE else "(?:%s)") % q)
        import re2

        opts = re2.Options()
        opts.max_mem = 256 << 20
        opts.log_errors = False
        good = []
        self.unfiltered: list[str] = []
        for p in pats:
            q = _clamp_repeats(_backrefs_to_any(_strip_lookarounds(p)))
            try:
                re2.compile(q, opts)
                good.append(q)
            except Exception:  # noqa: BLE001 - a pattern RE2 cannot take disables the prefilter
                self.unfiltered.append(p)
        self._pre = None
        if good:  # an RE2 Set: one pass for every pattern (a plain union is ~5x slower here)
            st = re2.Set.SearchSet(opts)
            for q in good:
                st.Add(q)
            st.Compile()
            self._pre = st
        if entropy or self.unfiltered:
            self._pre = None  # entropy detectors match any long string: no prefilter can help
        from detect_secrets.settings import cache_bust, get_settings

        cache_bust()
        st = get_settings()
        st.clear()  # the default filters (heuristics), no verification
        st.configure_plugins([{"name": n} for n in self.plugin_names])
        # never verify: a plugin's verify() sends the secret to its provider's API
        st.filters.pop("detect_secrets.filters.common.is_ignored_due_to_verification_policies", None)
        self._keyword = K.KeywordDetector() if "KeywordDetector" in self.plugin_names else None

    def candidate(self, s: str) -> bool:
        return self._pre is None or bool(self._pre.Match(s))

    def scan(self, text: str) -> list[Hit]:
        """Secrets in ``text``: spans (in ``text``), type, hashed secret, masked preview."""
        if len(text) < MIN_STRING or not self.candidate(text):
            return []
        from detect_secrets.core.scan import scan_line

        out: list[Hit] = []
        base = 0
        for line in text.split("\n"):
            if len(line) >= MIN_STRING and self.candidate(line):
                seen: set[tuple[str, str]] = set()
                for sec in self._secrets(line, scan_line):
                    if not sec.secret_value:
                        continue
                    a, b = self._span(line, sec.type, sec.secret_value)
                    # the hash of what is masked: detect-secrets' own when its value is the whole
                    # secret (a GitHub token's value is only its prefix: all would hash alike)
                    h = hashlib.sha1(line[a:b].encode("utf-8", "surrogatepass")).hexdigest()
                    if (sec.type, h) in seen:
                        continue
                    seen.add((sec.type, h))
                    out.append(Hit(base + a, base + b, sec.type, h, mask(line[a:b])))
            base += len(line) + 1
        return out

    def _secrets(self, line: str, scan_line):
        """detect-secrets' adhoc scan of the line, plus its keyword detector with the rules it
        applies to config files (``KEY=value`` unquoted: environment dumps, .env files), passed
        through the same heuristic filters."""
        yield from scan_line(line)
        if self._keyword is None:
            return
        from detect_secrets.filters import heuristic as H

        if H.is_indirect_reference(line):
            return
        for sec in self._keyword.analyze_line(filename="transcript.ini", line=line, line_number=0):
            v = sec.secret_value or ""
            if (H.is_sequential_string(v) or H.is_potential_uuid(v) or H.is_likely_id_string(v, line, self._keyword)
                    or H.is_templated_secret(v) or H.is_prefixed_with_dollar_sign(v) or H.is_not_alphanumeric_string(v)):
                continue
            yield sec

    def _span(self, line: str, typ: str, value: str) -> tuple[int, int]:
        """Where the secret is: the detector's own match when its value is only a prefix of it
        (GitHub tokens report ``ghp``), else the value itself."""
        pos = line.find(value)
        for r in self._plugin_regexes.get(typ, ()):
            for m in r.finditer(line):
                s = m.group(0)
                if value in s and (len(value) < 8 or s.startswith(value)) and len(s) > len(value):
                    if m.start() <= pos < m.end() or pos < 0:
                        return m.start(), m.end()
        if pos < 0:
            return 0, len(line)
        return pos, pos + len(value)


def mask(s: str) -> str:
    """A preview that never shows the secret: a few leading characters (at most a quarter, at
    most 4), then the length."""
    keep = min(4, len(s) // 4)
    return f"{s[:keep]}…({len(s)} chars)"


@lru_cache(maxsize=2)
def detector(entropy: bool = False) -> Detector:
    return Detector(entropy)


# -- the allowlist -----------------------------------------------------------------------------


def allowlist_path(env: Mapping[str, str] | None = None) -> Path:
    """``${XDG_CONFIG_HOME:-~/.config}/sessionsift/secrets-allowlist.txt``."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or str(Path.home()), ".config")
    return Path(base) / "sessionsift" / ALLOWLIST_NAME


def load_allowlist(path: str | os.PathLike[str] | None = None) -> tuple[set[str], str]:
    """Known false positives: one ``hashed_secret`` (40 hex, as a finding reports it) per line;
    ``#`` starts a comment. Returns (hashes, state): state ``ok``, ``absent`` or ``unreadable: ...``."""
    p = Path(path) if path is not None else allowlist_path()
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return set(), "absent"
    except OSError as exc:
        return set(), f"unreadable: {exc.strerror or exc}"
    out = set()
    for ln in text.splitlines():
        tok = ln.split("#", 1)[0].strip().lower()
        if re.fullmatch(r"[0-9a-f]{40}", tok):
            out.add(tok)
    return out, "ok"


# -- reading -----------------------------------------------------------------------------------


def iter_strings(v: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(field path, string) of every string in a record, binary payloads skipped."""
    from .size import BINARY, _category

    stack: list[tuple[Any, str, str | None, dict | None]] = [(v, path, None, None)]
    while stack:
        x, p, key, parent = stack.pop()
        if isinstance(x, dict):
            items = list(x.items())
            for k, y in reversed(items):
                stack.append((y, f"{p}.{k}" if p else str(k), k, x))
        elif isinstance(x, list):
            for i in range(len(x) - 1, -1, -1):
                stack.append((x[i], f"{p}[{i}]", key, parent))
        elif isinstance(x, str) and len(x) >= MIN_STRING:
            cat, _mt = _category(x[:128], key, parent, None)
            if cat in BINARY:
                continue
            yield p, x


def scan_sessions(pairs: Iterable[tuple[Provider, SessionRef]], *, entropy: bool = False,
                  allow: set[str] | None = None) -> SecretsResult:
    det = detector(entropy)
    res = SecretsResult()
    allow = allow or set()
    for prov, ref in pairs:
        res.sessions += 1
        res.child_sessions += ref.parent_session_id is not None
        rep = ReadReport()
        for loc, line, path, instant, obj in _records(prov, ref, rep):
            for fld, s in iter_strings(obj):
                res.strings += 1
                if not det.candidate(s):
                    continue
                res.candidates += 1
                for h in det.scan(s):
                    if h.hashed_secret in allow:
                        res.allowlisted += 1
                        continue
                    res.findings.append(Finding(ref.provider, ref.session_id, loc, fld, path, h.type,
                                                h.hashed_secret, h.preview, line, instant, ref.parent_session_id))
        res.reports.append((ref, rep))
        res.problems.extend(rep.problems)
    return res


def _records(prov: Provider, ref: SessionRef, rep: ReadReport):
    """(locator, line, path, instant, object) per line of a line-based session (its raw JSON,
    every lane), or per row of a database session."""
    from .size import _file_lines, _line_based

    if _line_based(prov, ref):
        from ..read.lines import parse_line

        multi = len(ref.paths) > 1
        for i, p in enumerate(ref.paths):
            pre = f"{p.name}:" if multi and i else ""
            try:
                if str(p).endswith(".json"):
                    try:
                        obj = orjson.loads(p.read_bytes())
                    except orjson.JSONDecodeError:
                        rep.malformed_lines.append(f"{p}:1")
                        continue
                    yield f"{pre}L1", 1, str(p), None, obj
                    continue
                for ln in _file_lines(prov, p, rep):
                    obj = parse_line(ln.raw)
                    if obj is None:
                        if ln.raw.strip(b"\x00 \t\r"):
                            rep.malformed_lines.append(f"{p}:{ln.no}")
                        continue
                    ts = obj.get("timestamp")
                    yield f"{pre}L{ln.no}", ln.no, str(p), ts if isinstance(ts, str) else None, obj
            except OSError as exc:
                rep.problems.append(Problem(str(p), exc.strerror or str(exc)))
            except Exception as exc:  # noqa: BLE001
                rep.problems.append(Problem(str(p), f"{type(exc).__name__}: {exc}"))
        return
    seen: set[str] = set()
    try:
        for r in prov.read(ref, rep, raw=True):
            base = r.locator.split("#output", 1)[0]
            if base in seen:
                continue
            seen.add(base)
            yield base, None, r.path, r.instant, r.raw
    except Exception as exc:  # noqa: BLE001
        rep.problems.append(Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                    f"reader failed: {type(exc).__name__}: {exc}"))


def redact(text: str, det: Detector | None = None, allow: set[str] | None = None) -> tuple[str, list[Hit]]:
    """``text`` with every secret replaced by ``[REDACTED <type> <preview>]``; the hits."""
    det = det or detector()
    hits = [h for h in det.scan(text) if not (allow and h.hashed_secret in allow)]
    if not hits:
        return text, []
    out = []
    prev = 0
    for h in sorted(hits, key=lambda h: h.start):
        if h.start < prev:
            continue
        end = h.end
        if h.type == "Private Key":
            # detect-secrets names the key by its BEGIN header: mask the whole block, to its END line
            stop = text.find("-----END", end)
            end = len(text) if stop < 0 else (text.find("\n", stop) if text.find("\n", stop) >= 0 else len(text))
        out.append(text[prev:h.start])
        out.append(f"[REDACTED {h.type} {h.preview}]")
        prev = end
    out.append(text[prev:])
    return "".join(out), hits
