"""The headless agent: flags (:mod:`headwire.cli.flags.agent`) to a run in the mode they ask for.

* ``--acp``: the ACP server (:mod:`headwire.acp.server`);
* ``--input-format stream-json``: a persistent session (:mod:`headwire.cli.run.session`);
* a prompt (``-p``, arguments, stdin): one run in text, json or stream-json, through
  :func:`run_once`;
* no prompt on a terminal: the REPL (:mod:`headwire.cli.run.repl`).

A one-shot run is the event stream of :mod:`headwire.events` flowing from the agent to the
recorder and to the headless emitter, whose messages go to the output format's transport (and
to the Dual Output sidecar).  In text mode, when stderr is a terminal or with ``--verbose``,
the progress view (:mod:`headwire.cli.run.progress`) is subscribed too, before the emitter.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from headwire import __version__
from headwire.cli.build import (
    Runtime,
    SessionPlan,
    approval_mode,
    build_runtime,
    check_flags,
    open_acp_runtime,
    plan_session,
)
from headwire.cli.flags.agent import apply_compat, build_parser, check_new_session_id
from headwire.cli.flags.parsing import Parser
from headwire.cli.run.outputs import save_trajectory, subscribe_bound_records
from headwire.cli.run.result_guard import ResultGuard, output_format_of
from headwire.errors import ExitCode, UsageError
from headwire.events import Event, RecordingDegraded, TurnFinished
from headwire.headless import HeadlessEmitter, turn_exit_code
from headwire.io.signals import cancelled_exit_code, run_cancellable
from headwire.io.stdio import for_terminal, route_library_notes, warn
from headwire.io.writer import WireWriter
from headwire.protocol.messages import JsonDict
from headwire.runtime.agent.loop import CANCELLED_MESSAGE, AskPermission
from headwire.runtime.ids import new_uuid
from headwire.transports import HeadlessTransport, make_transport

if TYPE_CHECKING:
    from headwire.cli.run.dual import DualOutput
    from headwire.cli.run.progress import TerminalProgress


def _read_prompt(args: argparse.Namespace) -> str:
    parts: list[str] = []
    if args.input_format == "text" and not sys.stdin.isatty():
        data = sys.stdin.buffer.read()
        text = data.decode("utf-8", "replace").strip()
        if text:
            parts.append(text)
    if args.prompt:
        parts.append(args.prompt)
    if args.query:
        parts.append(" ".join(args.query))
    return "\n\n".join(parts)


def note_recording_failure(event: Event) -> None:
    """Say on stderr, once, that the recording stopped (the wire says it too)."""
    if isinstance(event, RecordingDegraded):
        warn(f"headwire: session recording disabled: {event.reason}")


def exit_code(finished: TurnFinished) -> int:
    """The process exit code of a one-shot run that ended with ``finished`` (the README's
    exit-code matrix; a signal's 130/143 is decided by :func:`run_cancellable`), the same the
    result's ``headwire.exit_code`` says (:func:`headwire.headless.turn_exit_code`)."""
    return turn_exit_code(finished)


async def open_headless_runtime(
    args: argparse.Namespace,
    cwd: Path,
    plan: SessionPlan,
    *,
    writer: WireWriter,
    transport: HeadlessTransport,
    dual: DualOutput | None,
    ask: AskPermission | None,
    first: Callable[[Runtime], None] | None = None,
    guard: ResultGuard | None = None,
) -> Runtime:
    """A session's runtime whose events reach ``transport`` (and the Dual Output sidecar);
    ``first`` subscribes consumers that must see each event before the headless emitter (the
    progress view, which takes its live region down before the answer is written).  The
    text-mode answer reaches a terminal through the sanitizer (:func:`for_terminal`)."""
    runtime = await build_runtime(args, cwd, plan, ask=ask)
    text = args.output_format == "text"
    if first is not None:
        first(runtime)

    def deliver(message: JsonDict) -> None:
        if guard is not None:
            guard.seen(message)
        out = transport.feed(message)
        writer.write(for_terminal(out.stdout) if text and out.stdout else out.stdout)
        if out.stderr:
            warn(out.stderr.decode("utf-8", "replace"))
        if dual is not None:
            dual.emit(message)

    partials = transport.include_partial_messages or dual is not None
    emitter = HeadlessEmitter(
        plan.session_id, new_uuid, deliver, partials=partials, cancelled_code=cancelled_exit_code
    )
    if runtime.telemetry is not None:
        runtime.telemetry.fields = emitter.result_extra  # the result carries the trace id
    runtime.events.subscribe(emitter)
    subscribe_bound_records(args, runtime, plan.session_id, deliver)
    runtime.events.subscribe(note_recording_failure)
    return runtime


def _progress(args: argparse.Namespace) -> tuple[list[TerminalProgress], Callable[[Runtime], None]]:
    """The progress view of a one-shot text run, when wanted (see
    :mod:`headwire.cli.run.progress`)."""
    views: list[TerminalProgress] = []

    def first(runtime: Runtime) -> None:
        if args.output_format != "text":
            return  # the JSON wires show no progress: nothing of the view is imported
        from headwire.cli.run.progress import progress_for, wants_progress

        if wants_progress(args):
            views.append(progress_for(runtime))
            runtime.events.subscribe(views[0])

    return views, first


async def run_once(
    args: argparse.Namespace,
    prompt: str | None,
    writer: WireWriter,
    transport: HeadlessTransport,
    guard: ResultGuard | None = None,
) -> int:
    """One prompt (or, with ``prompt=None``, the interactive REPL); a run that ends before its
    turn could still ends with one result (``guard``, :mod:`headwire.cli.run.result_guard`)."""
    guard = guard if guard is not None else ResultGuard("text")
    try:
        return await _run_once(args, prompt, writer, transport, guard)
    except asyncio.CancelledError:
        guard.fail(CANCELLED_MESSAGE, writer.write, cancelled_exit_code())
        raise
    except UsageError:
        raise  # run_agent ends it (exit code 2)
    except Exception as exc:
        guard.fail(f"Internal error: {type(exc).__name__}: {exc}", writer.write)
        raise


def _open_dual(args: argparse.Namespace, session_id: str, writer: WireWriter) -> DualOutput | None:
    """The Dual Output side channel the flags ask for, or ``None``; its modules load only when
    one of its flags is given (most runs have none)."""
    if args.json_fd is None and args.json_file is None and not args.input_file:
        return None
    from headwire.cli.run.dual import open_dual_output
    from headwire.io.dual_output import DualOutputError

    try:
        return open_dual_output(args, session_id, lambda: approval_mode(args), writer)
    except DualOutputError as exc:
        raise UsageError(str(exc)) from None


async def _run_once(
    args: argparse.Namespace,
    prompt: str | None,
    writer: WireWriter,
    transport: HeadlessTransport,
    guard: ResultGuard,
) -> int:
    cwd = Path.cwd()
    plan = plan_session(args, cwd)
    guard.session_id = plan.session_id
    dual = _open_dual(args, plan.session_id, writer)
    if prompt is None:
        return await _run_repl(args, cwd, plan, writer, transport, dual)
    views, first = _progress(args)
    try:
        runtime = await open_headless_runtime(
            args,
            cwd,
            plan,
            writer=writer,
            transport=transport,
            dual=dual,
            ask=dual.ask if dual is not None else None,
            first=first,
            guard=guard,
        )
    except BaseException:
        if dual is not None:
            await dual.close()
        raise
    try:
        if dual is not None:
            dual.start(str(cwd), __version__)
        finished = await runtime.agent.run_turn(prompt)
    finally:
        for view in views:
            view.close()
        if dual is not None:
            await dual.close()
        await runtime.aclose()
        save_trajectory(args, runtime)
        await writer.drain()
    return exit_code(finished)


async def _run_repl(
    args: argparse.Namespace,
    cwd: Path,
    plan: SessionPlan,
    writer: WireWriter,
    transport: HeadlessTransport,
    dual: DualOutput | None,
) -> int:
    """The REPL (:mod:`headwire.cli.run.repl`): it opens (and reopens, for ``/resume`` and
    ``/clear``) its runtimes through :func:`open_headless_runtime`."""
    from headwire.cli.run.repl import Repl

    async def open_runtime(
        session: SessionPlan, ask: AskPermission, first: Callable[[Runtime], None]
    ) -> Runtime:
        return await open_headless_runtime(
            args,
            cwd,
            session,
            writer=writer,
            transport=transport,
            dual=dual,
            ask=dual.ask if dual is not None else ask,
            first=first,
        )

    def started() -> None:
        if dual is not None:
            dual.start(str(cwd), __version__)

    repl = Repl(args, cwd, open_runtime, dual=dual, drain=writer.drain, started=started)
    try:
        return await repl.run(plan)
    finally:
        if dual is not None:
            await dual.close()
        await writer.drain()


def run_agent(argv: list[str]) -> int:
    """Parse ``argv`` and run one headless session; returns the exit code.

    In JSON and stream-JSON modes a failure before the turn (bad flags included) still ends
    with one error ``result`` on stdout (:mod:`headwire.cli.run.result_guard`)."""
    route_library_notes()
    from headwire.cli.flags.claude_argv import expand_variadic

    argv = expand_variadic(argv)
    parser = build_parser()
    guard = ResultGuard("text" if "--acp" in argv else output_format_of(argv))
    try:
        return _run_agent(parser, argv, guard)
    except SystemExit as exc:
        if exc.code == ExitCode.USAGE:
            guard.fail(parser.last_error or "invalid command line", exit_code=ExitCode.USAGE)
        raise


def _run_agent(parser: Parser, argv: list[str], guard: ResultGuard) -> int:
    args = parser.parse_args(argv)
    if args.query and not args.prompt:  # the first word of the prompt; -p TEXT says it is one
        from headwire.cli.flags.parsing import subcommand_slip

        slip = subcommand_slip(args.query[0], " ".join(args.query))
        if slip is not None:
            parser.error(slip)
    apply_compat(args)
    guard.output_format = "text" if args.acp else args.output_format
    guard.session_id = args.session_id or (args.resume if args.resume != "latest" else None)
    from headwire.cli.flags.contract import prepare_contract
    from headwire.cli.flags.permissions import policy_from_args
    from headwire.cli.flags.settings import prepare

    try:
        prepare(args, Path.cwd())  # may take -o from output.format
        guard.output_format = "text" if args.acp else args.output_format
        policy_from_args(args, Path.cwd())  # permission rules are checked before anything runs
        prepare_contract(args, Path.cwd())
    except UsageError as exc:
        warn(f"headwire: {exc}")
        guard.fail(str(exc), exit_code=ExitCode.USAGE)
        return ExitCode.USAGE
    from headwire.runtime.store.storage import data_dir

    check_new_session_id(parser, args, data_dir(), Path.cwd())
    if args.acp:
        from headwire.acp.server import run_acp

        return run_acp(args, open_acp_runtime, check_flags)
    if args.input_format == "stream-json":
        if args.output_format != "stream-json":
            parser.error("--input-format stream-json requires --output-format stream-json")
        from headwire.cli.run.session import run_session

        return run_session(args, guard)
    writer = WireWriter()
    try:
        interactive = (
            args.prompt is None  # -p alone (Claude Code's print mode) is not interactive
            and not args.query
            and args.output_format == "text"
            and sys.stdin.isatty()
        )
        args.interactive = interactive  # an output style that waits for the user needs one
        prompt = None if interactive else _read_prompt(args)
        if prompt is not None and not prompt.strip():
            raise UsageError(
                "No input provided. Pass a prompt with -p, as an argument, or on stdin."
            )
        if args.json_fd is not None:
            from headwire.io.dual_output import DualOutputError, check_json_fd

            try:  # before the event loop opens descriptors of its own
                check_json_fd(args.json_fd)
            except DualOutputError as exc:
                raise UsageError(str(exc)) from None
        transport = make_transport(args.output_format, args.include_partial_messages)
        return run_cancellable(run_once(args, prompt, writer, transport, guard))
    except UsageError as exc:
        warn(f"headwire: {exc}")
        code = int(getattr(exc, "exit_code", ExitCode.USAGE))  # a sandbox that cannot hold: 1
        guard.fail(str(exc), None if writer.closed else writer.write, code)
        return code
    except KeyboardInterrupt:
        warn("headwire: interrupted")
        return ExitCode.INTERRUPTED
    finally:
        writer.close()
