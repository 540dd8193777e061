"""`search`: a thin CLI over sessionsift.search (docs/search.md); its body is search_run.run
(also run by the fast path, cli/fastsearch.py, without click)."""

from __future__ import annotations

import click

from .invocation import targeting
from .search_run import _human_bytes, _left_out_text, _print_counts, _snippet, _summary_line  # noqa: F401


@click.command("search")
@click.argument("args", nargs=-1)
@click.option("-e", "--regexp", "regexps", multiple=True, help="A pattern (repeatable; then every ARG is a target).")
@click.option("-i", "--ignore-case", is_flag=True, help="Case-insensitive match.")
@click.option("-F", "--fixed-strings", "fixed", is_flag=True, help="Patterns are literal strings.")
@click.option("-t", "--type", "include", multiple=True,
              help="Label selector: leaf, dotted prefix, glob; a bare role (user/agent/harness) means its LLM-visible leaves.")
@click.option("-T", "--type-not", "exclude", multiple=True, help="Exclude a label selector.")
@click.option("--attachments", is_flag=True, help="Also search attachment lines (gated otherwise).")
@click.option("--additional-context", is_flag=True, help="Also search hook additional-context attachments.")
@click.option("-m", "--max-count", type=int, default=None, help="At most N hits per session.")
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
@click.option("--no-context", is_flag=True, help="Print matching records only (no turn opener).")
@click.option("-l", "--sessions-with-matches", "sessions_only", is_flag=True, help="Print the ids of sessions with a hit.")
@click.option("-c", "--count", "count", is_flag=True, help="Print the number of hits.")
@click.option("--count-by", type=click.Choice(["label", "tool", "attachment", "session", "project", "day", "model", "pairing"]),
              default=None, help="Census of hits by a key.")
@click.option("--resolve-persisted", is_flag=True,
              help="Substitute a <persisted-output> pointer by the saved file's text before matching.")
@click.option("--count-lines", is_flag=True,
              help="Count the lines of every transcript for the summary (one more pass over every byte).")
@click.option("--rank", is_flag=True,
              help="Rank whole turns by the words of PATTERN (BM25) and print the best ones: find that conversation.")
@click.option("-n", "--limit", type=int, default=None, help="With --rank: how many turns (default 10).")
@targeting(targets=None, window="records", dataset=True)
def search_cmd(inv, args, regexps, ignore_case, fixed, include, exclude, attachments, additional_context,
               max_count, no_subagents, no_context, sessions_only, count, count_by, resolve_persisted, count_lines,
               rank, limit):
    """Search records with a linear-time regex (RE2); print each hit with its turn opener.

    PATTERN matches the text the transcript holds (message text, thinking, tool input JSON,
    tool results), never rendered labels. An empty pattern matches every selected record.

    \b
    Example: sessionsift search 'ENOENT' . -t agent.tool.result
    Example: sessionsift search '' -t user.message --count
    Example: sessionsift search -e foo -e bar --count-by tool --format json
    Example: sessionsift search --rank 'flaky test retry' -n 5
    Exit: 0 hits; 1 no hit; 2 usage error; 3 hits but some input unreadable.
    """
    from .search_run import SearchArgs, run

    return run(inv, SearchArgs(tuple(args), tuple(regexps), ignore_case, fixed, tuple(include), tuple(exclude),
                               attachments, additional_context, max_count, no_subagents, no_context, sessions_only,
                               count, count_by, resolve_persisted, count_lines, rank, limit))
