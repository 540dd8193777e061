"""`show`: one session of any agent -- whole, turn by turn (session.py), or its records by address
(records.py: line, locator, turn; Claude Code's own addresses, uuid and branch points, are its
provider's deep model: providers/claude/show.py)."""
