"""What a Gemini CLI tool call's recorded result proves: the shell exit code, the file changes.

Exit codes (``run_shell_command``, measured with 0.61.0 and read from its source,
``packages/core/src/tools/shell.ts``). The model-facing result is::

    <untrusted_context>
    Output: <stdout and stderr, merged>
    [Error: <spawn error>]
    [Exit Code: <n>]            only when the exit code is non-zero
    [Signal: <signal>]
    [Background PIDs: <pids>]
    [Process Group PGID: <pgid>]
    </untrusted_context>

(the wrapper since mid-2026; 0.28 and 0.38 write the same body without it, measured). An exit code is
read from an ``Exit Code:`` trailer line when there is one (releases before 2026-01 began with
``Command:`` and wrote the line for 0 too). Without one, 0 is *proven* only when all of these hold: the
call's status is ``success``; the body starts with ``Output:`` (the format that omits the line exactly
when the code is 0 or absent; not a cancelled, backgrounded or summarised result); it has no ``Error:``
or ``Signal:`` trailer (the two ways the code is absent). Anything else is unknown (None), never 0; in
particular a tool result read only from a ``functionResponse`` user message has no status, so its 0 is
not proven.

The trailers are peeled from the end in the client's fixed order, so a command whose own output ends
with a line ``Exit Code: 5`` directly before the trailers is indistinguishable from an exit 5: the
format does not say which it is (documented in docs/providers.md).

File changes (``write_file``, ``replace`` and any tool whose ``resultDisplay`` has the same shape): a
successful call's ``resultDisplay`` holds ``filePath``, ``originalContent``, ``newContent`` (the whole
file after the change: a complete view), ``isNewFile`` and ``fileDiff``.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import FileChange

SHELL_TOOLS = frozenset({"run_shell_command", "shell"})
_TRUNCATED = re.compile(r"\AOutput too large\. Showing first [\d,]+ and last [\d,]+ characters\. "
                        r"For full output see: [^\n]*\n")
"""The preamble the client puts before a tool output it cut for the model (0.61.0, measured: a
50,000-line ``seq``): the first and last characters with ``... [N characters omitted] ...`` between;
the whole output is saved in ``tool-outputs/session-<id>/<call id>.txt`` and kept as the call's
``resultDisplay`` in the chat file."""
_WRAP = re.compile(r"\A\s*<untrusted_context[^>]*>\n?(.*)\n?</untrusted_context>\s*\Z", re.S)
_TRAILERS = ("Process Group PGID", "Background PIDs", "Signal", "Exit Code", "Error")
_CODE = re.compile(r"-?\d+")


def shell_exit_code(text: str | None, status: str | None) -> int | None:
    """The exit code a recorded shell result proves (see module docstring), else None."""
    if not isinstance(text, str):
        return None
    cut = _TRUNCATED.match(text) if text.startswith("Output too large") else None
    if cut is not None:
        text = text[cut.end():]  # the trailers still end the cut output
    m = _WRAP.match(text)
    body = m.group(1) if m else text
    lines = body.rstrip("\n").split("\n")
    found: dict[str, str] = {}
    order = list(_TRAILERS)
    while len(lines) > 1 and order:
        last = lines[-1]
        hit = next((k for k in order if last.startswith(k + ": ")), None)
        if hit is None:
            break
        found[hit] = last[len(hit) + 2:].strip()
        order = order[order.index(hit) + 1:]  # earlier trailers only: the client's order is fixed
        lines.pop()
    if "Exit Code" in found:
        code = found["Exit Code"]
        return int(code) if _CODE.fullmatch(code) else None
    if (status == "success" and lines and lines[0].startswith("Output: ")
            and "Signal" not in found and "Error" not in found):
        return 0
    return None


def untruncated_output(text: str | None, display: Any) -> str | None:
    """The whole output of a call whose model-facing result the client cut (see ``_TRUNCATED``),
    from its ``resultDisplay`` string; None when the result was not cut or no display holds it."""
    if isinstance(text, str) and isinstance(display, str) and _TRUNCATED.match(text):
        return display
    return None


def file_changes(display: Any, status: str | None) -> tuple[FileChange, ...]:
    """The change a successful file tool recorded in its ``resultDisplay`` (empty when none)."""
    if status != "success" or not isinstance(display, dict):
        return ()
    path, new = display.get("filePath"), display.get("newContent")
    if not isinstance(path, str) or not isinstance(new, str):
        return ()
    is_new = display.get("isNewFile")
    old = display.get("originalContent")
    diff = display.get("fileDiff")
    return (FileChange(path=path, action="create" if is_new is True else "update", new_content=new,
                       old_content=None if is_new is True or not isinstance(old, str) else old,
                       diff=diff if isinstance(diff, str) else None),)


def response_text(resp: Any) -> tuple[str | None, bool | None]:
    """Text and error flag of a ``functionResponse.response`` object (``{output}`` or ``{error}``)."""
    if isinstance(resp, dict):
        if isinstance(resp.get("output"), str) and "error" not in resp:
            return resp["output"], False
        if "error" in resp:
            e = resp["error"]
            return (e if isinstance(e, str) else _dumps(e)), True
        return _dumps(resp), None
    if isinstance(resp, str):
        return resp, None
    return (None if resp is None else _dumps(resp)), None


def _dumps(x: Any) -> str:
    import orjson

    try:
        return orjson.dumps(x).decode()
    except TypeError:
        return repr(x)


# read_file (0.61.0's bundle, ``ReadFileInvocation.execute`` and ``processSingleFileContent``; 0.28.2 and
# 0.38.2 write the same truncation header, read in their installed sources): a text
# file's lines are split on ``\r?\n`` and joined with ``\n`` (so the final newline is kept); a cut
# read (more than 2000 lines, a start_line/end_line range short of the whole file, or a line longer
# than 2000 characters) gets this header before the lines; discovered project context is appended
# after them; a binary or large SVG file gets a sentence instead of content.
READ_TRUNCATED = "\nIMPORTANT: The file content has been truncated."
READ_JIT = "\n\n--- Newly Discovered Project Context ---\n"
READ_NOT_CONTENT = ("Cannot display content of ", "Output too large", "[Message Normalized:")
"""Not file content: a binary/large-SVG sentence, the client's cut for the model, the history
normaliser's cut (``[Message Normalized: Tool output exceeded size limit]``, 0.61.0)."""


def read_file_view(call, result) -> tuple[str, str, bool] | None:
    """(the file, the evidence) when a ``read_file`` result holds the whole text file: the call
    succeeded (status ``success``), the output is a string without the truncation header, without
    appended project context, not a binary-file sentence and not cut by the client for the model.
    What it cannot show: a CRLF file's ``\r`` (the client splits lines on ``\r?\n``) and a
    byte-order mark (decoded away); the evidence says so."""
    t = result.text
    if result.kind != "tool_result" or result.is_error is not False or result.truncated or not isinstance(t, str):
        return None
    if t.startswith(READ_TRUNCATED) or READ_JIT in t or t.startswith(READ_NOT_CONTENT):
        return None
    return t, ("Gemini CLI read_file output with no truncation header: every line of the file as the client "
               "decoded it (line breaks as \\n: a CRLF file's \\r and a byte-order mark are not in it)"), True
