"""The CLI's view of the rendering path, which lives below cli/ in `sessionsift.render` (the
library uses it too). Re-exported here for the command modules."""

from __future__ import annotations

from ..render import Out, clip, dumps, err_line, esc, esc_keep_tabs, plural  # noqa: F401
