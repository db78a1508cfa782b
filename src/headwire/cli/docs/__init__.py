"""Generators of the committed references: docs/cli.md, settings.md and wire.md."""
