"""Waste audits: what the client re-sent to the model, measured from the records on disk."""

from .reinjection import AuditResult, Delivery, Exit, FileReport, Flush, LaneReport, audit, audit_lane, reinjection

__all__ = ["AuditResult", "Delivery", "Exit", "FileReport", "Flush", "LaneReport", "audit", "audit_lane", "reinjection"]
