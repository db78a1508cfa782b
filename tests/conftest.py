"""Suite-wide hooks: every wire a tapped launcher saw is checked against the schema.

SDK tests start headwire through :func:`tests.wire_tap.launcher`; after each test the lines
it captured, both ways, are validated (:func:`tests.wire_schema.check_tap`), so a test fails
when headwire wrote, or a real client sent, a line outside the published schema.  The
terminal summary counts the lines validated in the session.

A suite started in the background (``pytest &`` from a script, ``nohup``) inherits SIGINT
ignored, and every headwire it starts would too: headwire keeps an ignored signal ignored, as
``nohup`` asks, so the signal tests would wait for an exit that never comes.  The suite takes
SIGINT back before any test runs.

The caller's terminal type, locale, width and colour switches never reach a test: the suite
runs in the fixed environment of :mod:`tests.environment`.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests import environment, wire_schema, wire_tap

environment.apply(os.environ)  # before any test module is imported


# The suite must hold on a loaded 2-core machine (issue 21): no property test fails because the
# machine was slow to generate or run an example.  A test's own ``@settings`` still wins.
settings.register_profile("headwire", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("headwire")


def pytest_configure(config: pytest.Config) -> None:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # children get the default


@pytest.fixture(autouse=True)
def _wire_taps_validate() -> Iterator[None]:
    wire_tap.TAPS.clear()
    yield
    taps, wire_tap.TAPS[:] = list(wire_tap.TAPS), []
    for tap in taps:
        wire_schema.check_tap(tap)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if wire_schema.COUNTS:
        terminalreporter.write_line(wire_schema.summary())
