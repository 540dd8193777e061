"""Crush scenarios, played through Crush's own schema, queries and part shapes (crushdb.py).

Each scenario is driven the way Crush's agent loop (internal/agent/agent.go) writes a turn: the user
message (``createUserMessage``: text + attachments, plus the ``finish`` that ``message.Create``
appends), one assistant message per model step (created empty at the step's start, then updated
with reasoning, text, tool calls and a ``finish`` part at the step's end), one ``tool`` message per
tool result, the file history the write/edit tools record, and the session usage that
``updateSessionUsage`` saves after each step. The tool effects (files written, commands' output and
exit codes) are real: the files are written into the project directory and the commands run there.

:func:`build` returns the ground truth: what each session must read back as.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from . import crushdb as c

HELLO = 'print("hello from crush")\n'
PNG_1PX = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360000002000154a24f6f0000000049454e44ae426082")


@dataclass
class Truth:
    sessions: dict[str, dict] = field(default_factory=dict)
    projects: dict[str, str] = field(default_factory=dict)

    def session(self, sid: str, **kw) -> dict:
        return self.sessions.setdefault(sid, {"prompts": [], "tool_calls": [], "files": {}, "parent": None,
                                              "usage": None, "cost": 0.0} | kw)


class Agent:
    """Plays one Crush session's turns into a database."""

    def __init__(self, crush: c.Crush, project: Path, truth: Truth, sid: str, conv: str):
        self.k = crush
        self.project = project
        self.truth = truth
        self.sid = sid
        self.conv = conv
        self.n = 0
        self.t = truth.session(sid)

    def prompt(self, txt: str, attachments: list[dict] | None = None, extra_parts: list[dict] | None = None) -> None:
        parts = [c.text(txt)] + (attachments or []) + (extra_parts or [])
        self.k.create_message(self.sid, "user", parts)
        self.t["prompts"].append(txt)

    def step(self, *, reasoning: str | None = None, say: str | None = None, calls: list[tuple[str, dict]] = (),
             usage: tuple[int, int] = (1000, 30), cost: float = 0.001, finish: str | None = None,
             kill: bool = False) -> c.Message:
        """One model step; runs the tool calls (real effects) unless ``kill`` stops it mid-stream."""
        m = self.k.create_message(self.sid, "assistant", [])
        now = self.k.now()
        if reasoning:
            m.parts.append(c.reasoning(reasoning, started_at=now, finished_at=now))
            self.k.update_message(m)
        if say:
            m.parts.append(c.text(say))
            self.k.update_message(m)
        ids = []
        for i, (name, inp) in enumerate(calls):
            cid = f"call_{self.conv}_{self.n}_{i}"
            ids.append(cid)
            m.parts.append(c.tool_call(cid, name, inp, finished=not kill))
            self.k.update_message(m)
        self.n += 1
        if kill:  # the client died here: no finish, no results, no usage saved
            self.t["tool_calls"] += [{"id": cid, "name": n, "input": i, "exit": None, "ran": False}
                                     for cid, (n, i) in zip(ids, calls)]
            return m
        m.parts.append(c.finish(finish or ("tool_use" if calls else "end_turn"), self.k.now()))
        self.k.step_usage(self.sid, *usage, cost)
        self.t["usage"] = usage
        self.t["cost"] = round(self.t["cost"] + cost, 10)
        self.k.update_message(m)
        for cid, (name, inp) in zip(ids, calls):
            self._run_tool(m, cid, name, inp)
        return m

    def _run_tool(self, m: c.Message, cid: str, name: str, inp: dict) -> None:
        rec = {"id": cid, "name": name, "input": inp, "exit": None}
        if name == "write":
            p = Path(inp["file_path"])
            old = p.read_text() if p.exists() else ""
            p.write_text(inp["content"])
            self.k.record_write(self.sid, str(p), old, inp["content"])
            self.k.record_read(self.sid, str(p), self.project)  # write.go: filetracker.RecordRead
            self.t["files"][str(p)] = inp["content"]
            self.t.setdefault("reads", []).append(str(p.relative_to(self.project)))
            res = c.tool_result(cid, name, f"<result>\nFile successfully written: {p}\n</result>",
                                {"diff": "", "additions": inp["content"].count("\n"), "removals": 0})
        elif name == "edit":
            p = Path(inp["file_path"])
            old = p.read_text()
            new = old.replace(inp["old_string"], inp["new_string"], 1)
            p.write_text(new)
            self.k.record_write(self.sid, str(p), old, new)
            self.k.record_read(self.sid, str(p), self.project)  # edit.go commitFileChange
            self.t["files"][str(p)] = new
            self.t.setdefault("reads", []).append(str(p.relative_to(self.project)))
            res = c.tool_result(cid, name, f"<result>\nContent replaced in file: {p}\n</result>",
                                {"old_content": old, "new_content": new, "additions": 1, "removals": 0})
        elif name == "bash":
            r = subprocess.run(["sh", "-c", inp["command"]], cwd=self.project, capture_output=True, text=True)
            out = r.stdout  # tools/bash.go formatOutput
            err = r.stderr
            msg = err
            if r.returncode != 0:
                msg = (msg + "\n" if msg else "") + f"Exit code {r.returncode}"
            if out and err:
                out += "\n"
            if msg:
                out += "\n" + msg
            rec["exit"] = r.returncode
            res = c.tool_result(cid, name, out or "no output",
                                {"start_time": 1, "end_time": 2, "output": r.stdout, "description": inp.get("description", ""),
                                 "working_directory": str(self.project)})
        elif name == "agent":
            res = None  # filled by the caller after the child session ran
        else:
            raise ValueError(name)
        self.t["tool_calls"].append(rec)
        if res is not None:
            self.k.create_message(self.sid, "tool", [res])


def build(base: Path) -> Truth:
    """Create ``base/crush-home`` (projects.json) and two projects under it, each with .crush/crush.db."""
    home = base / "crush-home"
    truth = Truth()
    projects = []
    for name in ("app", "notes"):
        proj = home / "projects" / name
        (proj / ".crush").mkdir(parents=True, exist_ok=True)
        projects.append(proj)
        truth.projects[name] = str(proj)
    # ---------------------------------------------------------------- project "app"
    app = projects[0]
    con = c.create_db(app / ".crush")
    k = c.Crush(con)
    # shell_write: reasoning, a write, a bash call, a closing text
    s1 = k.create_session("New Session")
    a = Agent(k, app, truth, s1, "shell_write")
    a.prompt("Create hello.py, then list the directory and show the file.")
    a.step(reasoning="I will write the file first.", calls=[("write", {"file_path": str(app / "hello.py"), "content": HELLO})],
           usage=(1200, 40))
    a.step(say="Written. Now listing.", calls=[("bash", {"command": "ls -1 hello.py && cat hello.py",
                                                          "description": "List and show"})], usage=(1300, 35))
    a.step(say="hello.py is in place.", usage=(1400, 20))
    k.run("UpdateSessionTitleAndUsage", "Shell and write", 50, 5, 0.0001, s1)  # GenerateTitle's usage
    truth.sessions[s1].update(title="Shell and write", scenario="shell_write")
    truth.sessions[s1]["cost"] = round(truth.sessions[s1]["cost"] + 0.0001, 10)
    truth.sessions[s1]["usage"] = (1400 + 50, 20 + 5)  # UpdateTitleAndUsage adds to the last step's
    # continued: two prompts in one session, an edit of the file the first one wrote
    s2 = k.create_session("Notes")
    a = Agent(k, app, truth, s2, "continued")
    a.prompt("Start a notes file.")
    a.step(calls=[("write", {"file_path": str(app / "notes.md"), "content": "# Notes\n\nfirst line\n"})])
    a.step(say="notes.md started.")
    a.prompt("Add a second line and count the lines.")
    a.step(calls=[("edit", {"file_path": str(app / "notes.md"), "old_string": "first line\n",
                            "new_string": "first line\nsecond line\n"})])
    a.step(calls=[("bash", {"command": "wc -l < notes.md", "description": "Count lines"})])
    a.step(say="Two lines now.")
    truth.sessions[s2].update(title="Notes", scenario="continued")
    # failing: a command that exits 3
    s3 = k.create_session("Failing")
    a = Agent(k, app, truth, s3, "failing")
    a.prompt("Check for a missing directory.")
    a.step(calls=[("bash", {"command": "ls /nonexistent-ssift-dir; echo 'giving up' >&2; exit 3",
                            "description": "Look for the dir"})])
    a.step(say="It does not exist (exit 3).")
    truth.sessions[s3].update(title="Failing", scenario="failing")
    # subagent: the agent tool runs a child session named <message id>$$<call id>
    s4 = k.create_session("Delegated")
    a = Agent(k, app, truth, s4, "subagent")
    a.prompt("Delegate writing sub.txt.")
    m = a.step(calls=[("agent", {"prompt": "Write sub.txt with one line and report back."})])
    cid = truth.sessions[s4]["tool_calls"][-1]["id"]
    child = k.create_task_session(m.id, cid, s4, "Write sub.txt")
    b = Agent(k, app, truth, child, "subagent_child")
    k.create_message(child, "user", [c.text("Write sub.txt with one line and report back.")])
    truth.sessions[child].update(parent=s4, task_prompt="Write sub.txt with one line and report back.",
                                 scenario="subagent_child", title="Write sub.txt")
    b.step(calls=[("write", {"file_path": str(app / "sub.txt"), "content": "written by the subagent\n"})])
    b.step(say="sub.txt written.")
    k.create_message(s4, "tool", [c.tool_result(cid, "agent", "sub.txt written.")])
    a.step(say="The subagent wrote sub.txt.")
    truth.sessions[s4].update(title="Delegated", scenario="subagent")
    # a title session (session.go CreateTitleSession: "title-<id>", parent set; Crush 37f36e93 never
    # calls it -- GenerateTitle adds its usage to the parent's row -- an open PR records it there)
    tsid = k.create_title_session(s4)
    truth.session(tsid, parent=s4, scenario="title", title="Generate a title")
    # killed: the second step dies mid-stream (tool call not finished, no finish part)
    s5 = k.create_session("Killed")
    a = Agent(k, app, truth, s5, "killed")
    a.prompt("Write a file, then think for a long time.")
    a.step(calls=[("write", {"file_path": str(app / "before-kill.txt"), "content": "this landed before the kill\n"})])
    a.step(say="Thinking about the next", calls=[("bash", {"command": "sleep 1", "description": "wait"})], kill=True)
    truth.sessions[s5].update(title="Killed", scenario="killed", killed=True)
    con.close()
    # ---------------------------------------------------------------- project "notes": the other part shapes
    notes = projects[1]
    con = c.create_db(notes / ".crush")
    k = c.Crush(con)
    s6 = k.create_session("Attachments")
    a = Agent(k, notes, truth, s6, "attachments")
    a.prompt("Describe the picture and the notes <b>&</b> the logo.",
             attachments=[c.binary(str(notes / "todo.txt"), "text/plain", b"buy milk\n"),
                          c.binary(str(notes / "logo.png"), "image/png", PNG_1PX)],
             extra_parts=[c.image_url("https://example.invalid/cat.png", "low")])
    a.step(reasoning="Two attachments and a link.", say="A 1x1 logo and a shopping list.")
    # bang mode: the user runs a shell command; its output becomes a shell_command part
    r = subprocess.run(["sh", "-c", "echo from-the-user; exit 4"], cwd=notes, capture_output=True, text=True)
    k.create_message(s6, "user", [c.shell_command("echo from-the-user; exit 4", r.stdout, r.returncode)])
    truth.sessions[s6].update(title="Attachments", scenario="attachments",
                              shell_commands=[{"command": "echo from-the-user; exit 4", "exit": r.returncode}])
    # an assistant step that ended in a provider error (finish reason "error")
    m = k.create_message(s6, "assistant", [])
    m.parts.append(c.finish("error", k.now(), "Provider error", "upstream 500"))
    k.update_message(m)
    con.close()
    # ---------------------------------------------------------------- global data: projects.json
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    home.mkdir(parents=True, exist_ok=True)
    (home / "projects.json").write_text(json.dumps(
        {"projects": [{"path": str(p), "data_dir": str(p / ".crush"), "last_accessed": now} for p in projects]},
        indent=2))
    return truth
