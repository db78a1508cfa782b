"""Every exception class headwire defines derives from :class:`headwire.errors.HeadwireError`."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import headwire
from headwire.errors import ConfigError, ExitCode, HeadwireError, UsageError

OPTIONAL = {"harbor", "opentelemetry"}
"""Packages of optional extras: a module that needs one is skipped where it is not installed."""


def project_exceptions() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(headwire.__path__, "headwire."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:  # an optional extra's module (headwire[harbor])
            if (exc.name or "").split(".")[0] in OPTIONAL:
                continue
            raise
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith("headwire."):
                found.append(obj)
    return found


def test_every_exception_derives_from_the_root() -> None:
    found = project_exceptions()
    assert len(found) >= 20
    strays = sorted(
        f"{c.__module__}.{c.__qualname__}" for c in found if not issubclass(c, HeadwireError)
    )
    assert not strays


def test_config_errors_stay_value_errors() -> None:
    assert issubclass(UsageError, ConfigError) and issubclass(ConfigError, ValueError)


def test_exit_codes_are_distinct() -> None:
    assert len({int(c) for c in ExitCode}) == len(ExitCode)
    assert ExitCode.INTERRUPTED == 130 and ExitCode.TERMINATED == 143
