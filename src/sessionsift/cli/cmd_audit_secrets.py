"""`audit secrets`: credentials that landed in transcripts, every provider (docs/audit.md)."""

from __future__ import annotations

import click

from .exit import ExitStatus
from .invocation import targeting
from .options import (coverage_json, coverage_line, sessions_unit, make_selection, problems_json, selection_header, claude_root_arg)
from .output import Out, esc

SECRETS_INVISIBLE = [
    "Detection is detect-secrets' (its plugins and heuristic filters); a credential no plugin knows is not found, "
    "and its entropy detectors are off unless --entropy is given.",
    "Binary payloads (base64 images and documents, thinking signatures, encrypted reasoning) are not scanned.",
    "A finding names where a credential is stored, not whether it is live: nothing is ever sent to verify it.",
]


def finding_json(f) -> dict:
    return {"provider": f.provider, "session_id": f.session_id, "is_subagent": f.parent_session_id is not None,
            "parent_session_id": f.parent_session_id, "locator": f.locator, "line": f.line,
            "field": f.field, "path": f.path, "secret_type": f.type, "preview": f.preview,
            "hashed_secret": f.hashed_secret, "timestamp": f.instant}


@click.command("secrets")
@targeting()
@click.option("--entropy", is_flag=True, help="Also run detect-secrets' high-entropy string detectors (noisy on transcripts).")
@click.option("--allowlist", "allowlist", type=click.Path(dir_okay=False), default=None,
              help="Known false positives (one hashed_secret per line; default: "
                   "${XDG_CONFIG_HOME:-~/.config}/sessionsift/secrets-allowlist.txt).")
def secrets_cmd(inv, entropy, allowlist):
    """Credentials in transcripts (API keys, tokens, private keys, passwords in URLs and environment
    dumps), found with detect-secrets: locator, field, kind and a masked preview, never the secret.
    Exit 0: none found; 9: some found; 3: none found but something could not be read.

    \b
    Example: sessionsift audit secrets --home examples/home
    Example: sessionsift audit secrets . --format json
    """
    fmt = inv.fmt
    from ..audit.secrets import allowlist_path, load_allowlist, scan_sessions
    from ..export.source import pairs

    sel = make_selection(inv)
    allow_file = allowlist or str(allowlist_path())
    allow, allow_state = load_allowlist(allow_file)
    res = scan_sessions(pairs(sel), entropy=entropy, allow=allow)
    out = Out(fmt, "audit")
    out.header(**selection_header(sel), audit="secrets", entropy=entropy,
               allowlist={"path": allow_file, "state": allow_state, "entries": len(allow)})
    by_session: dict[tuple[str, str], list] = {}
    for f in res.findings:
        by_session.setdefault((f.provider, f.session_id), []).append(f)
        out.row("finding", finding_json(f))
    for (prov, sid), fs in by_session.items():
        out.text(f"{esc(sid)} ({esc(prov)}): {len(fs)} finding{'s' if len(fs) != 1 else ''}")
        for f in fs:
            out.text(f"  {esc(f.locator)} {esc(f.field)}: {esc(f.type)} {esc(f.preview)} (hashed {f.hashed_secret[:12]})")
    omis: dict[str, int] = {}
    for _ref, rep in res.reports:
        for k, v in rep.omissions().items():
            omis[k] = omis.get(k, 0) + v
    types: dict[str, int] = {}
    for f in res.findings:
        types[f.type] = types.get(f.type, 0) + 1
    covs = sel.coverage()
    out.summary(audit="secrets", sessions=res.sessions - res.child_sessions, child_sessions=res.child_sessions,
                findings=len(res.findings), by_type=types,
                sessions_with_findings=len(by_session), allowlisted=res.allowlisted, strings_scanned=res.strings,
                candidate_strings=res.candidates, omissions=omis, problems=problems_json(res.problems),
                invisible=SECRETS_INVISIBLE, coverage=coverage_json(covs))
    n = len(res.findings)
    out.text(f"{n} finding{'s' if n != 1 else ''} in {len(by_session)} of {sessions_unit(res.sessions, covs)}"
             + (": " + ", ".join(f"{esc(k)} {v}" for k, v in sorted(types.items())) if types else "")
             + (f"; {res.allowlisted} known false positives skipped ({esc(allow_file)})" if res.allowlisted else ""))
    if allow_state.startswith("unreadable"):
        out.text(f"allowlist {esc(allow_file)} {esc(allow_state)}: nothing was skipped")
    for p in res.problems[:5]:
        out.text(f"unreadable: {esc(p.path)} ({esc(p.why)})")
    lost = {k: v for k, v in omis.items() if v}
    if lost:
        out.text("not read: " + ", ".join(f"{k}={v}" for k, v in sorted(lost.items())))
    out.text(coverage_line(covs))
    if n:
        return ExitStatus.SECRETS_FOUND
    if res.problems or sel.incomplete() or allow_state.startswith("unreadable"):
        return ExitStatus.INCOMPLETE
    return ExitStatus.OK
