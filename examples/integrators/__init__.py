"""The files docs/integrators.md walks through: a site folder (`core/App/`) and a satellite package."""
