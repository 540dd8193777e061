"""`audit reinjection`: files whose changed-on-disk contents the client re-injected into context,
for every agent. Each provider in the selection is asked for its ``reinjection`` capability
(providers/base.py ``Provider.reinjection``; Claude Code's reads the ``edited_text_file``
attachments of its lanes: providers/claude/reinjection.py, whose docstring says what is measured);
every other provider with sessions in the selection is named with why its data cannot answer
(``Provider.lacks["reinjection"]``). The answer's shape is providers/reinjection.py.
"""

from __future__ import annotations

from ..providers.reinjection import AuditResult, Delivery, Exit, FileReport, Flush, LaneReport  # noqa: F401 - re-exported

LACKS_DEFAULT = ("its reader names no record of a file the client re-sent because it changed on disk, so "
                 "there is nothing to audit")


def audit(sel, subagents: bool = True) -> AuditResult:
    """`audit reinjection` over a selection of every provider (providers.scope.Selection): the lanes
    each provider's ``reinjection`` capability audits (its answer's lanes and problems, in survey
    order), and every other provider with sessions in the selection named with why its data cannot
    answer (``Provider.lacks["reinjection"]``)."""
    res = AuditResult(problems=[])
    for e in sel.survey.entries:
        part = e.provider.reinjection(sel, subagents) if e.provider is not None else None
        if part is not None:
            res.lanes += part.lanes
            res.problems += part.problems
    counts: dict[str, int] = {}
    for r in sel.refs:
        counts[r.provider] = counts.get(r.provider, 0) + 1
    for e in sel.survey.entries:
        if counts.get(e.name) and e.provider is not None:
            res.lacks[e.display] = type(e.provider).lacks.get("reinjection", LACKS_DEFAULT)
    return res
