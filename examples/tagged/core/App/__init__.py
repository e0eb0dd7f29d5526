"""The tagged articles of docs/declarations.md (many-to-many relations): models and declarations."""
