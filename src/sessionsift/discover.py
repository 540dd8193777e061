"""Compatibility name: Claude Code's discovery lives in `sessionsift.providers.claude.discover`.

`sessionsift.discover` IS that module (the same object in `sys.modules`), so every existing
import and monkeypatch keeps working unchanged.
"""

import sys

from .providers.claude import discover as _impl

sys.modules[__name__] = _impl
