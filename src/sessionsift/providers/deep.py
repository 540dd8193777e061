"""What a reader's deeper model says of one line of a session (the ``deep_facts`` capability,
providers/base.py): the labels, the turn number and the survival its own model gives the line.
export, audit and sync label records with it where a reader offers it; elsewhere the shared
record's kind is the label."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DeepFacts:
    """What the deeper model says of one line: labels, turn, survival."""

    labels: tuple[str, ...]
    turn: int | None
    survival: str | None
