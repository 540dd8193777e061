"""sessionsift: read what coding agents wrote to disk, and never say "none" when it means "did not look"."""

__version__ = "0.1.0"
