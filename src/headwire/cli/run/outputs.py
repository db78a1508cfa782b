"""What a run writes beside its wire: ``--include-bound-records``' records and the
``--trajectory-out`` file (shared by the one-shot run and the persistent session)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from headwire import __version__
from headwire.cli.build import Runtime
from headwire.io.stdio import warn
from headwire.protocol.messages import JsonDict


def subscribe_bound_records(
    args: argparse.Namespace, runtime: Runtime, session_id: str, out: Callable[[JsonDict], None]
) -> None:
    """``--include-bound-records``: subscribe :class:`~headwire.headless.BoundRecords` (after the
    headless emitter that shares ``out``)."""
    if getattr(args, "include_bound_records", False):
        from headwire.headless import BoundRecords
        from headwire.runtime.trajectory import artifact_info

        runtime.events.subscribe(BoundRecords(session_id, out, artifact_info))


def save_trajectory(args: argparse.Namespace, runtime: Runtime) -> None:
    """``--trajectory-out``: render the (closed) session recording as ATIF and write it; a
    failure is said on stderr and changes nothing else."""
    target = getattr(args, "trajectory_out", None)
    if not target:
        return
    from headwire.runtime.store.recording import RecordingError
    from headwire.runtime.trajectory import write_trajectory

    recorder = runtime.recorder
    try:
        write_trajectory(Path(target), recorder.path, recorder.session_id, __version__)
    except (OSError, RecordingError) as exc:
        warn(f"headwire: cannot write the trajectory {target}: {exc}")


__all__ = ["save_trajectory", "subscribe_bound_records"]
