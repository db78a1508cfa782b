"""Progress for people: the event stream drawn on stderr with ``rich``.

One more subscriber of :attr:`~headwire.cli.build.Runtime.events`, installed in text mode when
stderr is a terminal or with ``--verbose`` (and in the REPL).  The notes come from
:class:`~headwire.progress.ProgressFeed`; this module only draws them:

* on a terminal, a live region (transient: erased when it ends) shows each running tool call
  with its elapsed time and the text a model call is streaming; the notes print above it.  The
  text of the turn's answer is not printed when stdout is the same kind of terminal, because
  stdout shows it next;
* elsewhere (``--verbose`` into a file or a pipe), plain lines, the text as it streams.

It must be subscribed before the headless emitter, so the live region is gone before the
answer reaches stdout.  stdout is never touched.  ``rich`` is imported here and in the
terminal writer only, lazily; the console comes from :func:`headwire.io.stdio.console`, which
passes every piece of text through the one sanitizer.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from headwire.events import Event
from headwire.io.stdio import console, stderr_is_terminal, stdout_is_terminal
from headwire.progress import Note, ProgressFeed, duration

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

STYLES = {
    "call": "bold cyan",
    "result": "green",
    "failed": "red",
    "denied": "bold yellow",
    "text": "",
    "delta": "",
    "subagent": "magenta",
    "summary": "dim",
}
MARKS = {
    "call": "● ",
    "result": "  ✓ ",
    "failed": "  ✗ ",
    "denied": "  ⊘ ",
    "subagent": "↳ ",
    "summary": "── ",
}
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class TerminalProgress:
    """An event subscriber that shows a run to a person on ``file`` (stderr)."""

    def __init__(
        self,
        feed: ProgressFeed,
        *,
        file: IO[str] | None = None,
        live: bool | None = None,
        answer_on_terminal: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.feed = feed
        self.clock = clock
        self.console: Console = console(file)
        if live is None:
            live = self.console.is_terminal and not self.console.is_dumb_terminal
        self.live_mode = live
        if answer_on_terminal is None:
            answer_on_terminal = stdout_is_terminal()
        self.answer_on_terminal = answer_on_terminal
        self._live: Live | None = None
        self._paused = 0
        self._mid_line = False
        self._broken = False

    # -- the subscriber ---------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        if self._broken:
            return
        try:
            for note in self.feed.feed(event, self.clock()):
                self._show(note)
            self._update_live()
        except Exception as exc:  # the view must never break a run
            self._broken = True
            with contextlib.suppress(Exception):
                self.close()
                self.console.out(f"headwire: progress display stopped: {exc}")

    def _show(self, note: Note) -> None:
        if note.kind == "delta":
            if not self.live_mode and note.text:
                self.console.out(note.text, end="", highlight=False)
                self._mid_line = not note.text.endswith("\n")
            return
        if note.kind == "text":
            if not self.live_mode:
                self._end_line()
                return
            if note.final and self.answer_on_terminal:
                return
        self._end_line()
        self.console.print(self._render(note))

    def _end_line(self) -> None:
        if self._mid_line:
            self.console.out("")
            self._mid_line = False

    def _render(self, note: Note) -> RenderableType:
        from rich.text import Text

        indent = "  " * note.depth
        text = Text(indent + MARKS.get(note.kind, ""), style=STYLES[note.kind])
        text.append(note.text, style=STYLES[note.kind])
        if note.hint:
            text.append("\n" + indent + "    " + note.hint, style="dim")
        return text

    # -- the live region --------------------------------------------------------------------

    def _active(self) -> bool:
        return bool(self.feed.running) or self.feed.streaming_since is not None

    def _update_live(self) -> None:
        if not self.live_mode:
            return
        want = self._active() and not self._paused
        if want and self._live is None:
            from rich.live import Live

            self._live = Live(
                console=self.console,
                get_renderable=self._live_view,
                refresh_per_second=10,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=True,
            )
            self._live.start()
        elif not want and self._live is not None:
            self._stop_live()
        elif self._live is not None:
            self._live.refresh()

    def _stop_live(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def _live_view(self) -> RenderableType:
        from rich.console import Group
        from rich.text import Text

        now = self.clock()
        frame = SPINNER[int(now * 10) % len(SPINNER)]
        lines: list[Any] = []
        feed = self.feed
        if feed.streaming_since is not None:
            height = max(1, self.console.height // 2)
            for line in feed.text_tail.splitlines()[-height:]:
                lines.append(Text(line, no_wrap=True, overflow="ellipsis"))
            waited = duration(now - feed.streaming_since)
            label = "writing" if feed.text_tail else "thinking"
            lines.append(Text(f"{frame} {label}… {waited}", style="dim"))
        for running in list(feed.running.values()):
            indent = "  " * running.depth
            lines.append(
                Text(
                    f"{indent}  {frame} {running.name} running {duration(now - running.since)}",
                    style="yellow",
                    no_wrap=True,
                    overflow="ellipsis",
                )
            )
        return Group(*lines)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Take the live region down while a person answers a question (an approval)."""
        self._paused += 1
        self._stop_live()
        try:
            yield
        finally:
            self._paused -= 1
            self._update_live()

    def close(self) -> None:
        """Stop the live region (idempotent)."""
        self._stop_live()
        self._end_line()


def wants_progress(args: Any) -> bool:
    """Whether a text-mode run shows progress: stderr is a terminal, or ``--verbose``."""
    return args.output_format == "text" and (bool(args.verbose) or stderr_is_terminal())


def progress_for(runtime: Any, *, interactive: bool = False) -> TerminalProgress:
    """A progress view of ``runtime``'s agent (``interactive``: in the REPL, where a person
    answers approvals)."""
    return TerminalProgress(ProgressFeed(interactive=interactive))


__all__ = ["TerminalProgress", "progress_for", "wants_progress"]
