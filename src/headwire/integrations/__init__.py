"""Adapters that run headwire inside other tools (imported only on demand; each may need an
optional extra, e.g. ``pip install 'headwire[harbor]'`` for :mod:`headwire.integrations.harbor`).

The parts that do not need the other tool (command lines, model names, reading a trajectory's
totals) live in :mod:`headwire.integrations.commands` so they are tested on every Python.
"""
