"""MEANING: labels, record shapes, lanes (survival and turns)."""
