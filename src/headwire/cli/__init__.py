"""Command line: flags to configuration to mode wiring (thin; the work happens below)."""
