"""Every command on transcripts written by the NEWEST Claude Code client (2.1.332) agrees with the
same scenarios written by the pinned client (2.1.258).

Data: both corpora are written by the real client (tests/realclient harness), no hand-made lines:
- examples/claude-home + examples/ground-truth: 2.1.258, all scenarios;
- examples/newest-client/2.1.332/{claude-home,ground-truth}: 2.1.332, five of them (trimmed to stay
  small: files_basic, interactive, subagents, plan_mode, bash_background). Regenerate with
  `.venv/bin/python -m tests.realclient.make_examples --version 2.1.332 --out DIR` and copy those five
  (examples/newest-client/README.md).
Record uuids, agent ids and timestamps differ between runs; prompts, tool-use ids, file contents
and scripted replies do not, so those are what the two versions are compared on.
The one mutated copy here (`test_agents_returned_text_without_the_structured_echo`) says so.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from sessionsift.providers.claude.stats import KNOWN_TYPES

REPO = Path(__file__).resolve().parents[1]
OLD = REPO / "examples" / "claude-home"
OLD_GT = REPO / "examples" / "ground-truth"
NEW_DIR = REPO / "examples" / "newest-client" / "2.1.332"
NEW = NEW_DIR / "claude-home"
NEW_GT = NEW_DIR / "ground-truth"
SCENARIOS = ("files_basic", "interactive", "subagents", "plan_mode", "bash_background")
NEW_TYPES = {"api-request", "api-request-blob", "api-request-shape", "tools-used"}
CONVERSATION = ("user.", "agent.", "harness.compaction.")


def run(*args: str, home: Path) -> tuple[int, list[dict], str]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--claude-home", str(home), "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return p.returncode, rows, p.stderr


def gt(name: str, new: bool) -> dict:
    return json.loads(((NEW_GT if new else OLD_GT) / f"{name}.json").read_text())


def norm(path: str | None) -> str | None:
    """The same scenario's work dir under either version's run root."""
    return re.sub(r"/tmp/ssift-rc(-2\.1\.332)?/", "/R/", path) if path else path


def test_the_committed_corpora_are_the_two_versions():
    for name in SCENARIOS:
        assert gt(name, False)["client_version"] == "2.1.258"
        assert gt(name, True)["client_version"] == "2.1.332"
        assert gt(name, True)["session_id"] == gt(name, False)["session_id"]
    size = sum(f.stat().st_size for f in NEW_DIR.rglob("*") if f.is_file() and not f.is_symlink())
    assert size < 1_600_000, f"the committed 2.1.332 corpus grew to {size} bytes"


@pytest.fixture(scope="module")
def stats_both():
    out = {}
    for label, home in (("old", OLD), ("new", NEW)):
        rc, rows, err = run("stats", home=home)
        assert rc == 0, err
        assert rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary"
        out[label] = {(r["session_id"], r["agent_id"] or "main"): r for r in rows if r["kind"] == "lane"}
    return out


def _main(stats: dict, sid: str) -> dict:
    return stats[(sid, "main")]


@pytest.mark.parametrize("name", SCENARIOS)
def test_turns_compactions_and_conversation_census_agree(stats_both, name):
    sid = gt(name, True)["session_id"]
    a, b = _main(stats_both["old"], sid), _main(stats_both["new"], sid)
    assert a["turns"] == b["turns"] and a["turns"] >= 1
    assert a["compactions"] == b["compactions"]

    def conv(r):
        return {k: v for k, v in r["labels"].items() if k.startswith(CONVERSATION)}

    assert conv(a) == conv(b), (conv(a), conv(b))
    # the prompts the ground truth typed are the user.message records (interactive: /compact is a command)
    typed = [p for p in gt(name, True)["prompts"] if not p["text"].startswith("/")]
    assert b["labels"].get("user.message") == len(typed)


def test_parallel_tool_calls_are_not_abandoned(stats_both):
    """2.1.332 writes the results of parallel Reads in completion order and continues the chain
    from the last one written, which can be the FIRST call's result: the second tool_use record
    (same API message) and its result sit off the walked chain. They were sent and answered, so
    they are live (this was 2 records `abandoned` before the fix in providers/claude/model/lane.py)."""
    for label in ("old", "new"):
        for (sid, lane), r in stats_both[label].items():
            if sid == gt("interactive", True)["session_id"]:
                continue  # its 2.1.258 run has a genuinely abandoned /compact command record (below)
            assert r["survival"].get("abandoned", 0) == 0, (label, sid, lane, r["survival"])
    _, rows, _ = run("show", gt("files_basic", True)["session_id"], "--turn", "1", home=NEW)
    reads = [r for r in rows if r["kind"] == "record" and "Read" in r["tool_names"]]
    assert len(reads) == 2 and {r["survival"] for r in reads} == {"live"}


def test_interactive_compact_command_record_is_a_client_difference(stats_both):
    """2.1.258 writes the typed `/compact` as a user record above the boundary (off the chain);
    2.1.332 does not. Both then write the local-command records after the summary."""
    sid = gt("interactive", True)["session_id"]
    a, b = _main(stats_both["old"], sid), _main(stats_both["new"], sid)
    assert a["labels"]["harness.command.invocation"] == 2 and a["survival"].get("abandoned") == 1
    assert b["labels"]["harness.command.invocation"] == 1 and "abandoned" not in b["survival"]


def test_new_record_types_pass_through_counted_and_unlabelled(stats_both):
    raw: Counter = Counter()
    for f in NEW.rglob("*.jsonl"):
        if "projects" in f.parts:
            for line in f.read_bytes().splitlines():
                if line.strip():
                    raw[json.loads(line).get("type")] += 1
    assert NEW_TYPES <= set(raw) and not NEW_TYPES & KNOWN_TYPES
    counted: Counter = Counter()
    for r in stats_both["new"].values():
        counted.update(r["unknown_line_types"])
        assert r["omissions"].get("malformed", 0) == 0
    assert counted == Counter({t: raw[t] for t in raw if t not in KNOWN_TYPES})
    for r in stats_both["old"].values():
        assert r["unknown_line_types"] == {}
    # never labelled: show every record of one transcript and look at the new types
    _, rows, _ = run("show", gt("files_basic", True)["session_id"], "--line", "1..400", home=NEW)
    new_rows = [r for r in rows if r["kind"] == "record" and r["type"] in NEW_TYPES]
    assert new_rows and all(r["labels"] == [] and r["survival"] is None for r in new_rows)


def _strings(v, out: list[str]) -> None:
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        for x in v.values():
            _strings(x, out)
    elif isinstance(v, list):
        for x in v:
            _strings(x, out)


_WRAPPER = re.compile(r"\[SYSTEM NOTIFICATION - NOT USER INPUT\]\n(?:.*\n){4}\n")


def test_api_request_blobs_hold_no_conversation_text_the_records_lack():
    """docs/search.md: user/assistant blob bodies are wire copies of what the user, assistant and
    attachment records hold (plus harness wrappers and token reminders); system bodies are harness
    context. Search therefore counts blob lines and does not match them."""
    checked = 0
    roles: Counter = Counter()
    for f in NEW.rglob("*.jsonl"):
        if "projects" not in f.parts:
            continue
        recs = [json.loads(x) for x in f.read_bytes().splitlines() if x.strip()]
        hay: list[str] = []
        for o in recs:
            if o.get("type") in ("user", "assistant", "attachment", "system"):
                _strings(o, hay)
        H = "\n".join(hay)
        for o in recs:
            if o.get("type") != "api-request-blob":
                continue
            m = o["message"]
            roles[m["role"]] += 1
            if m["role"] == "system":
                continue
            c = m["content"]
            for b in c if isinstance(c, list) else [{"type": "text", "text": c}]:
                if b.get("type") == "text":
                    txt = b["text"]
                elif b.get("type") == "tool_result":
                    cc = b.get("content")
                    txt = cc if isinstance(cc, str) else "\n".join(x.get("text", "") for x in cc or [] if isinstance(x, dict))
                else:
                    raise AssertionError(f"a blob block of a new kind: {b.get('type')}")
                if txt in H:
                    checked += 1
                    continue
                t = re.sub(r"<tools-used-before-summary>.*?</tools-used-before-summary>\n?", "", txt)
                t = re.sub(r"\n*<system-reminder>.*?</system-reminder>", "", t, flags=re.S)
                t = _WRAPPER.sub("", t)
                for piece in re.split(r"(?=<task-notification>)|(?<=</task-notification>)\n*", t):
                    if piece.strip():
                        checked += 1
                        assert piece.strip() in H, (f.name, piece[:200])
    assert checked >= 15 and roles["user"] >= 5 and roles["system"] >= 5


def test_search_agrees_and_counts_the_blob_lines():
    for pat in (r"\[\w+ P\d\]", "Created hello.py", "summary.txt"):
        _, a, _ = run("search", pat, home=OLD)
        _, b, _ = run("search", pat, home=NEW)
        key = lambda rows: sorted((r["session_id"], r["labels"][0], r["turn"]) for r in rows if r["kind"] == "hit"
                                  and r["session_id"] in {gt(n, True)["session_id"] for n in SCENARIOS})
        assert key(a) == key(b) and key(a), pat
        assert a[-1]["unknown_type_lines"] == {}
    # the prompt markers are also in the user blobs: counted, not matched
    rc, rows, _ = run("search", r"\[files_basic P1\]", home=NEW)
    assert rc == 0 and rows[-1]["hits"] == 1 and rows[-1]["unknown_type_lines"].get("api-request-blob", 0) >= 1
    # harness system text lives only in blobs: no hit, and the summary says where it was
    rc, rows, _ = run("search", "# Environment", home=NEW)
    assert rc == 1 and rows[-1]["hits"] == 0 and rows[-1]["unknown_type_lines"]["api-request-blob"] >= 5
    p = subprocess.run([sys.executable, "-m", "sessionsift", "search", "# Environment", "--claude-home", str(NEW)],
                       capture_output=True, text=True)
    assert "not searched (record types sessionsift does not read): api-request-blob" in p.stdout


def test_list_prompts_agree():
    _, a, _ = run("list", home=OLD)
    _, b, _ = run("list", home=NEW)
    pick = lambda rows: {r["session_id"]: (r["first_prompt"], r["last_prompt"], r["last_agent_message"], r["subagents"])
                         for r in rows if r["kind"] == "session"}
    A, B = pick(a), pick(b)
    assert set(B) == {gt(n, True)["session_id"] for n in SCENARIOS}
    for sid in B:
        assert A[sid] == B[sid]
    assert {r["version"] for r in b if r["kind"] == "session"} == {"2.1.332"}


@pytest.mark.parametrize("home", (OLD, NEW), ids=("2.1.258", "2.1.332"))
def test_a_prompts_queue_lines_are_in_its_turn(home):
    """The client writes a prompt's enqueue (with its text) and dequeue just above the user record
    they become; neither carries a uuid (QT-001). Both are that prompt's turn, so `show --turn N`
    opens with them: the first prompt's are turn 1 (not "no turn"), the second's turn 2 (not 1)."""
    sid = gt("files_basic", True)["session_id"]
    recs = []
    for n in ("1", "2", "3"):
        rc, rows, err = run("show", sid, "--turn", n, home=home)
        assert rc == 0, err
        recs += [r for r in rows if r["kind"] == "record"]
    recs.sort(key=lambda r: r["line"])
    prompts = {r["record"]["message"]["content"]: r["turn"] for r in recs if r["labels"][:1] == ["user.message"]}
    assert sorted(prompts.values()) == [1, 2, 3]
    queued = [r for r in recs if r["type"] == "queue-operation"]
    enq = {r["record"]["content"]: r["turn"] for r in queued if r["record"]["operation"] == "enqueue"}
    assert enq == prompts
    for q in queued:  # every queue line here sits right above the prompt it carried
        nxt = next(r for r in recs if r["line"] > q["line"] and r["uuid"] is not None)
        assert q["turn"] == nxt["turn"] == prompts[nxt["record"]["message"]["content"]], q["line"]
    assert sum(r["type"] == "queue-operation" for r in recs) == 6  # none left outside turns 1-3
    for n in (1, 2, 3):
        first = [r["type"] for r in recs if r["turn"] == n][:3]
        assert first == ["queue-operation", "queue-operation", "user"], n


def test_agents_returned_text_agrees():
    """2.1.332 frames a synchronous agent's report in the tool_result ("[Subagent hand-back] ...
    The report follows:" + every line indented); the report itself is the same."""
    _, a, _ = run("agents", home=OLD)
    _, b, _ = run("agents", home=NEW)
    pick = lambda rows: sorted((r["spawn"]["tool_use_id"], r["status"], r["returned_via"], r["returned"])
                               for r in rows if r["kind"] == "agent")
    assert pick(a) == pick(b)
    assert {x[3] for x in pick(b)} == {"Wrote summary.txt (3 lines).", "input.txt has 3 lines."}


def test_agents_returned_text_without_the_structured_echo(tmp_path):
    """MUTATED COPY of the real 2.1.332 subagents session: `toolUseResult.content` (the report
    alone) removed, so only the framed tool_result text is left (BASH-025: the structured echo is a
    per-lane, per-version fact)."""
    src = NEW / "projects" / "-tmp-ssift-rc-2-1-332-subagents-work"
    dst = tmp_path / "home" / "projects" / src.name
    import shutil

    shutil.copytree(src, dst)
    sid = gt("subagents", True)["session_id"]
    main = dst / f"{sid}.jsonl"
    lines = []
    for raw in main.read_bytes().splitlines():
        o = json.loads(raw)
        if isinstance(o.get("toolUseResult"), dict):
            o["toolUseResult"].pop("content", None)
        lines.append(json.dumps(o))
    main.write_text("\n".join(lines) + "\n")
    _, rows, _ = run("agents", home=tmp_path / "home")
    sync = [r for r in rows if r["kind"] == "agent" and r["returned_via"] == "sync-tool-result"]
    assert [r["returned"] for r in sync] == ["Wrote summary.txt (3 lines)."]


def test_status_verdicts_agree_except_the_killed_background_job():
    _, a, _ = run("status", home=OLD)
    _, b, _ = run("status", home=NEW)
    A = {r["session_id"]: r for r in a if r["kind"] == "session"}
    B = {r["session_id"]: r for r in b if r["kind"] == "session"}
    bg = gt("bash_background", True)["session_id"]
    for sid in B:
        if sid != bg:
            assert A[sid]["verdict"] == B[sid]["verdict"] == "idle-eot", sid
    # 2.1.258 exits with `sleep 600` still running: one launch stays open. 2.1.332 waits for it, the
    # runner SIGTERMs the client, and the client records the job as killed: nothing is left open.
    assert gt("bash_background", False)["print_runs"][0]["killed_after_script"] is False
    assert gt("bash_background", True)["print_runs"][0]["killed_after_script"] is True
    assert A[bg]["verdict"] == "idle-background-open" and B[bg]["verdict"] == "idle-eot"
    assert A[bg]["background_launches"] == B[bg]["background_launches"] == 2
    raw = (NEW / "projects" / "-tmp-ssift-rc-2-1-332-bash-background-work" / f"{bg}.jsonl").read_text()
    assert "<status>killed</status>" in raw


def test_files_and_recover_agree_with_ground_truth():
    _, a, _ = run("files", home=OLD)
    _, b, _ = run("files", home=NEW)
    sids = {gt(n, True)["cwd"].replace("/tmp/ssift-rc-2.1.332/", "/R/") for n in SCENARIOS}

    def pick(rows):
        out = {}
        for r in rows:
            if r["kind"] == "file" and "/plans/" not in r["file"]:
                p = norm(r["file"])
                if any(p.startswith(s + "/") for s in sids):
                    out[p] = r["ops"]
        return out

    assert pick(a) == pick(b) and len(pick(b)) >= 9
    for name in SCENARIOS:
        results = []
        for new, home in ((False, OLD), (True, NEW)):
            g = gt(name, new)
            for path, info in sorted(g["expected_files"].items()):
                rc, rows, err = run("recover", g["session_id"], "--file", path, home=home)
                sm = rows[-1]
                # the exit status tells the reconstruction's status apart (docs/files.md)
                want = {"complete": (0, 3), "complete_at_risk": (5,), "partial": (6,), "none": (7,),
                        "deleted": (8,)}[sm["status"]]
                assert rc in want, (sm["status"], rc, err)
                results.append((new, norm(path), sm["status"], info is not None and sm["sha256"] == info["sha256"]))
        old = [x[1:] for x in results if not x[0]]
        new_ = [x[1:] for x in results if x[0]]
        assert old == new_, name
        # every file the session wrote and nobody touched outside it comes back byte-exact
        assert all(ok for _, st, ok in new_ if st == "complete"), new_


def test_plan_image_and_verbatim_agree():
    _, a, _ = run("plan", home=OLD)
    _, b, _ = run("plan", home=NEW)
    pm = gt("plan_mode", True)["session_id"]
    pa = [r for r in a if r["kind"] == "plan" and r["session_id"] == pm]
    pb = [r for r in b if r["kind"] == "plan" and r["session_id"] == pm]
    assert len(pa) == len(pb) == 1 and pa[0]["plan_exists"] == pb[0]["plan_exists"] is True
    _, a, _ = run("image", home=OLD)
    _, b, _ = run("image", home=NEW)
    ia = sorted((r["media_type"], r["sha256"]) for r in a if r["kind"] == "image")
    ib = sorted((r["media_type"], r["sha256"]) for r in b if r["kind"] == "image")
    assert ia == ib and len(ib) == 1
    sid = gt("interactive", True)["session_id"]
    _, a, _ = run("verbatim", sid, home=OLD)
    _, b, _ = run("verbatim", sid, home=NEW)
    units = lambda rows: [(u["unit"], u["turn"], u["text"]) for u in rows if u["kind"] == "unit" and u["unit"] != "tool_calls"]
    ua, ub = units(a), units(b)
    assert [x[:2] for x in ua] == [x[:2] for x in ub] and ua
    texts = lambda us: [norm(t) for k, _, t in us if k in ("user", "agent")]
    assert texts(ua) == texts(ub)
    assert a[-1]["boundaries_total"] == b[-1]["boundaries_total"] == 1
