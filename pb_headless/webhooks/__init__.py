"""Webhooks: signed deliveries of the change log to site owners' endpoints, retried (docs/webhooks.md)."""
