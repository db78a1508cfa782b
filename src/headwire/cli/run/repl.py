"""The interactive REPL: ``headwire`` with no prompt while stdin is a terminal.

Each line typed is one turn; the answer goes to stdout as in Text mode and the progress view
(:mod:`headwire.cli.run.progress`) shows the turn on stderr.  The prompt comes back only when the
turn has ended.  Line editing and history (``~/.headwire/repl_history``, 0600) come from
``prompt_toolkit``, which draws on stderr; stdout carries answers only.

* Ctrl-C during a turn cancels the turn (its tool's process group is stopped, the error result
  ``Operation cancelled.`` is shown and recorded) and returns to the prompt; at the prompt it
  clears the line, and at an empty prompt it leaves (exit code 130).  Ctrl-D at an empty
  prompt, ``/quit`` and ``/exit`` leave with 0.  SIGTERM stops the whole REPL (143).
* In the ``default`` approval mode a call that needs approval asks: ``y`` allow once, ``a``
  allow this tool for the rest of the REPL, ``n`` (or Enter, Esc) deny; Ctrl-C denies and
  cancels the turn.  Only a key pressed after the question appeared answers it: keys typed
  during the turn are dropped, with a note, when the question is drawn.
* Slash commands (:mod:`headwire.cli.run.slash`) are handled here, never sent to the model.
* Prompts submitted on the Dual Output reverse channel (``--input-file``) run when the REPL is
  idle at its prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import termios
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from headwire.cli.build import Runtime, SessionPlan
from headwire.cli.run.dual import DualOutput
from headwire.cli.run.progress import TerminalProgress, progress_for, wants_progress
from headwire.cli.run.slash import (
    APPROVAL_MODES,
    SlashCommand,
    format_sessions,
    help_text,
    parse,
    recent_sessions,
    resolve_session,
)
from headwire.errors import ConfigError, ExitCode, HeadwireError, UsageError
from headwire.io.stdio import prompt_output, warn
from headwire.printable import printable
from headwire.progress import short_args
from headwire.runtime.agent.loop import AskPermission
from headwire.runtime.policy.permissions import Decision
from headwire.runtime.store.recording import conversation_of, find_session
from headwire.runtime.store.storage import data_dir, private_dir
from headwire.runtime.tools.base import Tool

PROMPT = "> "
HISTORY_FILE = "repl_history"
Opener = Callable[[SessionPlan, AskPermission, Callable[[Runtime], None]], Awaitable[Runtime]]
"""Builds a session's runtime with the text consumers attached: ``open(plan, ask, first)``
(``first`` subscribes the REPL's own consumers before the headless emitter)."""


class Repl:
    """One interactive session (see the module docstring)."""

    def __init__(
        self,
        args: argparse.Namespace,
        cwd: Path,
        open_runtime: Opener,
        *,
        dual: DualOutput | None = None,
        drain: Callable[[], Awaitable[None]] | None = None,
        started: Callable[[], None] | None = None,
    ) -> None:
        self.args = args
        self.cwd = cwd
        self.open_runtime = open_runtime
        self.dual = dual
        self.drain = drain
        self.started = started
        self.runtime: Runtime | None = None
        self.progress: TerminalProgress | None = None
        self.always: set[str] = set()
        """Tools allowed for the rest of the REPL (``a`` at an approval prompt)."""
        self.turn: asyncio.Task[Any] | None = None
        self.reading: asyncio.Task[Any] | None = None
        self.exit_code: int | None = None
        self._session: Any = None

    # -- the loop ----------------------------------------------------------------------------

    async def run(self, plan: SessionPlan) -> int:
        """Read and run lines until the person leaves; returns the exit code."""
        loop = asyncio.get_running_loop()
        await self._open(plan)
        if self.started is not None:
            self.started()
        with contextlib.suppress(RuntimeError, ValueError, OSError):  # not the main thread
            loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        try:
            self._banner()
            while self.exit_code is None:
                line = await self._read_line()
                if line is None:
                    break
                try:
                    skills = self.runtime.agent.config.skills if self.runtime else {}
                    parsed = parse(line, skills)
                except UsageError as exc:
                    warn(str(exc))
                    continue
                if isinstance(parsed, SlashCommand):
                    await self._command(parsed)
                elif parsed.strip():
                    await self._turn(parsed)
            return ExitCode.OK if self.exit_code is None else self.exit_code
        finally:
            await self._close()

    async def _open(self, plan: SessionPlan) -> None:
        def first(runtime: Runtime) -> None:
            if wants_progress(self.args):
                self.progress = progress_for(runtime, interactive=True)
                runtime.events.subscribe(self.progress)

        self.runtime = await self.open_runtime(plan, self.ask, first)

    async def _close(self) -> None:
        runtime, self.runtime = self.runtime, None
        if self.progress is not None:
            self.progress.close()
            self.progress = None
        if runtime is not None:
            await runtime.aclose()

    def _banner(self) -> None:
        assert self.runtime is not None
        config = self.runtime.agent.config
        warn(
            f"headwire {config.version} · model {self.runtime.agent.model.name} · approval "
            f"{config.approval_mode} · session {config.session_id}\n"
            "Type a prompt; /help lists the commands; Ctrl-D leaves."
        )

    async def _read_line(self) -> str | None:
        """The next line typed (or submitted on the reverse channel); ``None``: leave."""
        session = self._prompt_session()
        loop = asyncio.get_running_loop()
        self.reading = loop.create_task(session.prompt_async(PROMPT, handle_sigint=False))
        waiters: set[asyncio.Future[Any]] = {self.reading}
        submitted: asyncio.Task[str] | None = None
        if self.dual is not None:
            submitted = loop.create_task(self.dual.submits.get())
            waiters.add(submitted)
        try:
            done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waiters:
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, EOFError, KeyboardInterrupt):
                        await task
        reading, self.reading = self.reading, None
        if submitted is not None and submitted in done:
            warn(f"{PROMPT}{printable(submitted.result())}")
            return submitted.result()
        if reading.cancelled():
            return None
        try:
            return str(reading.result())
        except EOFError:
            return None
        except KeyboardInterrupt:
            self.exit_code = ExitCode.INTERRUPTED
            return None

    def _prompt_session(self) -> Any:
        if self._session is None:
            from prompt_toolkit import PromptSession

            self._session = PromptSession[str](
                history=_history(),
                output=prompt_output(),
                key_bindings=_line_keys(),
                erase_when_done=False,
            )
        return self._session

    # -- turns and Ctrl-C --------------------------------------------------------------------

    async def _turn(self, prompt: str) -> None:
        assert self.runtime is not None
        self.turn = asyncio.get_running_loop().create_task(self.runtime.agent.run_turn(prompt))
        try:
            await self.turn
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # SIGTERM: the whole REPL stops
        except HeadwireError as exc:
            warn(f"headwire: {exc}")
        finally:
            self.turn = None
            if self.drain is not None:
                await self.drain()

    def _on_sigint(self) -> None:
        turn = self.turn
        if turn is not None and not turn.done():
            if turn.cancelling():  # a second Ctrl-C while the turn is stopping: leave
                warn("headwire: interrupted again; leaving")
                self.exit_code = ExitCode.INTERRUPTED
                return
            turn.cancel()
        elif self.reading is not None:  # a SIGINT sent to the process at the prompt
            self.exit_code = ExitCode.INTERRUPTED
            self.reading.cancel()

    # -- approvals ---------------------------------------------------------------------------

    async def ask(self, tool: Tool, call_id: str, args: dict[str, Any]) -> Decision:
        """Ask the person at the terminal whether ``tool`` may run with ``args``."""
        if tool.name in self.always:
            return Decision(allow=True)
        with contextlib.ExitStack() as stack:
            if self.progress is not None:
                stack.enter_context(self.progress.paused())
            answer = await _approval(tool, args)
        if answer == "always":
            self.always.add(tool.name)
        if answer in ("once", "always"):
            return Decision(allow=True)
        if answer == "cancel" and self.turn is not None:
            asyncio.get_running_loop().call_soon(self.turn.cancel)
            return Decision(allow=False, interrupt=True)
        return Decision(allow=False)

    # -- slash commands ----------------------------------------------------------------------

    async def _command(self, command: SlashCommand) -> None:
        assert self.runtime is not None
        agent, arg = self.runtime.agent, command.argument
        if command.name == "help":
            warn(help_text())
        elif command.name == "quit":
            self.exit_code = ExitCode.OK
        elif command.name == "sessions":
            sessions = recent_sessions(data_dir(), self.cwd)
            warn(format_sessions(sessions, agent.config.session_id))
        elif command.name == "model":
            if arg:
                try:
                    agent.switch_model(arg)
                except ConfigError as exc:
                    warn(f"model: {exc}")
                    return
            warn(f"model: {agent.model.name}")
        elif command.name == "approval-mode":
            if arg and arg not in APPROVAL_MODES:
                warn(f"Unknown approval mode {arg!r}; one of {', '.join(APPROVAL_MODES)}.")
                return
            if arg:
                agent.config.approval_mode = arg  # type: ignore[assignment]
            warn(f"approval mode: {agent.config.approval_mode}")
        elif command.name == "output-style":
            self._output_style(arg)
        elif command.name == "clear":
            old = agent.config.session_id
            await self._switch(SessionPlan(str(uuid.uuid4())))
            warn(f"new session {self._session_id()} (session {old} stays recorded)")
        elif command.name == "resume":
            await self._resume(arg)
        elif command.name == "compact":
            try:
                done = await agent.compact()
            except HeadwireError as exc:
                warn(f"headwire: compaction failed: {exc}")
                return
            if not done:
                warn("nothing to compact yet")

    def _output_style(self, name: str) -> None:
        """``/output-style``: the styles, the active one marked; with a name, that style from
        the next turn on (for this session: ``general.outputStyle`` keeps one)."""
        assert self.runtime is not None
        from headwire.cli.build import session_styles
        from headwire.runtime.config.output_styles import resolve_style

        config = self.runtime.agent.config
        styles = session_styles(self.args, data_dir(), self.cwd)
        if name:
            style, note = resolve_style(name, styles, interactive=True)
            if note is not None:
                warn(f"output style: {note}")
                return
            config.output_style = style
        if not name:
            active = config.output_style.name if config.output_style else "default"
            rows = [("default", "no style: the built-in prompt", "built-in")]
            rows += [(s.name, s.description, s.source) for s in styles.values()]
            warn(
                "\n".join(
                    f"{'*' if n.lower() == active.lower() else ' '} {n:<14} {d} ({src})"
                    for n, d, src in rows
                )
            )
        current = config.output_style.name if config.output_style else "default"
        note = " (not applied: --system-prompt replaces the prompt)" if config.system_prompt else ""
        warn(f"output style: {current}{note}")

    def _session_id(self) -> str:
        assert self.runtime is not None
        return self.runtime.agent.config.session_id

    async def _resume(self, text: str) -> None:
        root = data_dir()
        try:
            session_id = resolve_session(root, self.cwd, text, self._session_id())
            conversation = conversation_of(find_session(root, self.cwd, session_id))
        except HeadwireError as exc:
            warn(str(exc))
            return
        await self._switch(SessionPlan(session_id, conversation))
        warn(f"resumed session {session_id} ({len(conversation)} messages)")

    async def _switch(self, plan: SessionPlan) -> None:
        """Carry the model, approval mode and output style over to a new runtime for
        ``plan``."""
        assert self.runtime is not None
        old = self.runtime.agent
        model, mode, style = old.model.name, old.config.approval_mode, old.config.output_style
        await self._close()
        await self._open(plan)
        assert self.runtime is not None
        self.runtime.agent.switch_model(model)
        self.runtime.agent.config.approval_mode = mode
        self.runtime.agent.config.output_style = style


def _history() -> Any:
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    try:
        path = private_dir(data_dir()) / HISTORY_FILE
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))


def _line_keys() -> Any:
    """Ctrl-C clears a line that has text, and leaves at an empty prompt."""
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()

    @keys.add("c-c")
    def _(event: Any) -> None:
        buffer = event.app.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    return keys


TYPEAHEAD_READ_BYTES = 1 << 20
"""Bytes of typed-ahead input read (to count them) before the rest is flushed unread."""


def _drop_typeahead(typed: Any) -> int:
    """Discard every key typed before now: prompt_toolkit's store of keys a finished prompt
    read but did not use (``typed``: the question's input) and the terminal's pending input,
    the unfinished line of its cooked mode included.  Returns how many were dropped."""
    from prompt_toolkit.input.typeahead import get_typeahead

    dropped = len(get_typeahead(typed))
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        return dropped
    raw = [*saved[:6], list(saved[6])]
    raw[3] = saved[3] & ~(termios.ICANON | termios.ECHO)  # the pending line becomes readable
    raw[6][termios.VMIN], raw[6][termios.VTIME] = 0, 0  # a read never waits
    try:
        termios.tcsetattr(fd, termios.TCSANOW, raw)
        while dropped < TYPEAHEAD_READ_BYTES:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            dropped += len(chunk)
        termios.tcflush(fd, termios.TCIFLUSH)  # what is left, and what is still in flight
    except (OSError, termios.error):
        pass
    finally:
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)
    return dropped


async def _approval(tool: Tool, args: dict[str, Any]) -> str:
    """``once``, ``always``, ``deny`` or ``cancel`` (Ctrl-C), from one key press made after
    the question appeared: the question is drawn, then every key typed before it (during the
    turn, while the model thought) is dropped with a note, so typed-ahead text never answers
    it (``also run the tests`` is not an ``a``)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    keys = KeyBindings()
    answers = {"y": "once", "Y": "once", "a": "always", "A": "always", "n": "deny", "N": "deny"}
    for key, answer in answers.items():
        keys.add(key)(lambda event, answer=answer: event.app.exit(result=answer))
    for key in ("enter", "escape", "c-d"):
        keys.add(key)(lambda event: event.app.exit(result="deny"))
    keys.add("c-c")(lambda event: event.app.exit(result="cancel"))
    keys.add(Keys.Any)(lambda event: None)
    name = printable(tool.name, one_line=True)
    detail = short_args(tool.name, args, width=400)
    session = PromptSession[str](output=prompt_output(), key_bindings=keys)
    warn(f"? allow {name}: {detail}")
    dropped = _drop_typeahead(session.input)
    if dropped:
        warn(
            f"  ({dropped} key{'s' if dropped != 1 else ''} typed before this question "
            "dropped: only a key pressed now answers it)"
        )
    message = f"  y allow once · a allow {name} from now on · n deny (Enter, Esc) · Ctrl-C stop  "
    try:
        answer = await session.prompt_async(message, handle_sigint=False)
    except (EOFError, KeyboardInterrupt):
        return "deny"
    warn(f"  → {answer}")
    return str(answer)


__all__ = ["PROMPT", "Repl"]
