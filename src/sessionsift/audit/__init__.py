"""Waste audits: what the client re-sent to the model, measured from the records on disk."""

from .reinjection import AuditResult, Delivery, Exit, FileReport, Flush, LaneReport, audit

__all__ = ["AuditResult", "Delivery", "Exit", "FileReport", "Flush", "LaneReport", "audit"]
