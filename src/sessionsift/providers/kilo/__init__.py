"""Kilo Code (``@kilocode/cli`` on npm): the CLI is built from opencode's code, and keeps its sessions in
opencode's SQLite schema under its own names (docs/providers.md, "Kilo Code").

Where (the 7.7.7 binary's ``Database.path()`` and xdg-basedir app name ``kilo``): ``--kilo-home DIR`` (the
data dir, or a database file), then ``--home H`` -> ``H/.local/share/kilo``, then ``KILO_DB`` (absolute, or
relative to the data dir), then ``$XDG_DATA_HOME/kilo``, then ``~/.local/share/kilo``. Stores in a data
dir: ``kilo.db`` (release channels latest/beta/prod, or ``KILO_DISABLE_CHANNEL_DB``), ``kilo-<channel>.db``
(other channels), and ``opencode-<channel>.db`` (what the client opens for a channel whose
``kilo-<channel>.db`` does not exist yet when that file does: a store carried over from opencode).

The tables, messages and parts are opencode's (``session``, ``message``, ``part``, ``project``,
``session_message``, ``session_input``) and read by the opencode reader's code: this class only names the
places. Kilo's own tables (``kilo_board`` / ``kilo_board_message``: the agents' shared board, and
``session_context_epoch``) are not read. Its ``recall_message_role_idx`` index on ``json_extract()`` is why
sqlite_ro reopens such a database with ``trusted_schema`` on under SQLite before 3.41.
"""

from __future__ import annotations

from ..opencode import Opencode


class KiloCode(Opencode):
    name = "kilo-code"
    display = "Kilo Code"
    tool_pid_env = "KILO_PID"
    """What Kilo Code sets in its own process (so every tool command inherits it) beside ``AGENT=1`` and
    ``OPENCODE=1`` (its cli's middleware: ``process.env.KILO_PID=String(process.pid)``); no session id."""
    home_flag = "--kilo-home"
    env_var = None
    default_rel = ".local/share/kilo"
    process_names = ("kilo", "kilocode", ".kilo")
    """``kilo``/``kilocode``: the npm bin links (a node wrapper that spawns the binary, comm ``node``... its
    script argument is ``…/bin/kilo``) and the platform binary ``…/cli-linux-x64/bin/kilo``; ``.kilo``: the
    copy the wrapper's postinstall places beside itself."""
    client_packages = ("@kilocode/cli",)
    """The npm wrapper (7.7.7: ``"bin": {"kilo": "./bin/kilo", "kilocode": "./bin/kilo"}``): a script inside it,
    or ``npx``/``bunx`` of it. Set here so the opencode reader's ``opencode-ai`` is not inherited."""
    client_path_parts = ()
    records_cost = True
    lacks = {"reinjection": "Kilo Code writes no record of a file that changed on disk behind the session: its "
                            "messages and parts are opencode's (text, reasoning, tool, step-start/step-finish, patch, "
                            "snapshot, agent, subtask, retry, compaction; 7.7.9), none re-sending a changed file, so "
                            "there is nothing to audit"}
    """Compactions are opencode's (the compaction agent's ``summary`` message; every earlier row stays in
    the database: measured with 7.7.9, scenario ``compacted``): :meth:`Opencode.compaction_of`."""
    ccusage_agent = None
    app = "kilo"
    db_env = "KILO_DB"
    db_main = "kilo.db"
    db_globs = ("kilo-*.db", "opencode-*.db")

    def recorded_cost(self, record) -> float | None:
        """The price Kilo Code wrote for a step (its ``step-finish`` part's ``cost``, in USD from its model
        catalogue), read from the record's ``raw`` (opencode's rows carry the same field)."""
        raw = record.raw
        c = raw.get("cost") if isinstance(raw, dict) else None
        return float(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else None
