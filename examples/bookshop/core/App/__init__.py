"""The bookshop of docs/declarations.md: its models and its declaration file."""
