"""Connections to MCP servers (official ``mcp`` SDK) and the manager that owns them.

Each :class:`ServerConnection` runs one long-lived task that enters the transport and the
SDK ``Client`` (their task groups must be entered and left by the same task), lists the tools,
then waits until it is told to stop.  Calls come from the agent's task through the connected
``Client``; each runs as its own task raced against the timeout and the cancellation event,
and an abandoned call is cancelled (the SDK then tells the server).

Statuses, as ``system/init`` reports them: ``connected``; ``failed`` (never connected: the
command could not start, the handshake failed, or it did not answer within the connect
timeout); ``disconnected`` (it was connected, then crashed or dropped the connection, or the
session closed it).  A call to a disconnected server first tries to start it again.

The handshake is the classic ``initialize`` one (``mode="legacy"``), which every server speaks,
as Qwen Code's client does.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from headwire.io.stdio import warn
from headwire.runtime.environment import tool_environment
from headwire.runtime.mcp.config import ServerConfig, TransportKind
from headwire.runtime.mcp.stdio import ProcessState, StdioLaunch, stdio_transport
from headwire.runtime.mcp.tool import McpCallError, McpTool, Progress
from headwire.runtime.tools.base import Tool
from headwire.runtime.tools.schema import schema_problem

Status = Literal["connecting", "connected", "failed", "disconnected"]
DEFAULT_CONNECT_TIMEOUT_S = 30.0
STOP_WAIT_S = 10.0
CANCEL_WAIT_S = 2.0
LIST_PAGES = 100
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


def _leaf(exc: BaseException) -> BaseException:
    """The first meaningful exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def describe(exc: BaseException) -> str:
    """A one-line reason for a failed start or call."""
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        if exc.code == types.CONNECTION_CLOSED:
            return f"the connection to the server was lost ({exc.message})"
        return f"{exc.message} (MCP error {exc.code})"
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if not errors:
            return "the server returned a malformed result"
        where = ".".join(str(p) for p in errors[0]["loc"]) or "result"
        return (
            f"the server returned a malformed result ({exc.error_count()} problem(s); "
            f"{where}: {errors[0]['msg']})"
        )
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _is_connection_loss(exc: BaseException) -> bool:
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        return exc.code == types.CONNECTION_CLOSED
    return isinstance(
        exc,
        (
            httpx2.TransportError,
            OSError,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            anyio.EndOfStream,
        ),
    )


async def _wait_event(event: asyncio.Event) -> None:
    """``event.wait()``, or polling when the event belongs to another loop."""
    try:
        await event.wait()
    except RuntimeError:
        while not event.is_set():
            await asyncio.sleep(0.05)


class ServerConnection:
    """One MCP server: its connection task, tools and status (a ``CallTarget``)."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        version: str = "0",
        debug: bool = False,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.version = version
        self.debug = debug
        self.connect_timeout_s = connect_timeout_s
        self.on_change = on_change
        self.status: Status = "connecting"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.process: ProcessState | None = None
        self._client: Client | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._restart_lock = asyncio.Lock()

    # -- status ---------------------------------------------------------------------------

    def _set(self, status: Status, error: str | None) -> None:
        changed = status != self.status
        self.status, self.error = status, error
        if changed and self.on_change is not None:
            self.on_change()

    def _on_transport_closed(self) -> None:
        if self.status == "connected":
            self._set("disconnected", "the server closed the connection")

    async def _exit_note(self, with_stderr: bool = False) -> str:
        """``; the server exited with code N`` once the process is known to be gone (plus the
        end of its stderr when ``with_stderr``)."""
        state = self.process
        if state is None or state.pid is None:
            return ""
        for _ in range(50):
            if state.exit_code() is not None or state.shutting_down:
                break
            await asyncio.sleep(0.01)
        code = state.exit_code()
        note = "" if code is None else f"; the server exited with code {code}"
        tail = state.stderr_text(300).splitlines() if with_stderr else []
        return note + (f"; its stderr ends: {tail[-1].strip()}" if tail else "")

    # -- lifetime ---------------------------------------------------------------------------

    async def start(self, timeout_s: float | None = None) -> bool:
        """Connect and list the tools; ``False`` (status ``failed``) when that fails."""
        timeout_s = self.connect_timeout_s if timeout_s is None else timeout_s
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self.status = "connecting"
        self._runner = asyncio.create_task(self._run(ready), name=f"headwire-mcp-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout_s)
        except TimeoutError:
            ready.cancel()
            await self._halt(grace_s=0)
            self._set("failed", f"did not connect within {round(timeout_s * 1000)} ms")
            return False
        except Exception as exc:
            reason = describe(exc) + await self._exit_note(with_stderr=True)
            await self._halt(grace_s=0)
            self._set("failed", reason)
            return False
        except BaseException:  # cancelled (a signal): stop the attempt now, then go on
            ready.cancel()  # nobody waits for it any more: never set an exception on it
            await self._halt(grace_s=0)
            self._set("failed", "the start was cancelled")
            raise
        self._set("connected", None)
        return True

    async def _run(self, ready: asyncio.Future[None]) -> None:
        """The connection task: connect, publish, wait for the stop signal, disconnect."""
        kinds: list[TransportKind] = (
            ["http", "sse"] if self.config.sse_fallback else [self.config.transport]
        )
        try:
            for index, kind in enumerate(kinds):
                try:
                    async with AsyncExitStack() as stack:
                        client = await self._open(stack, kind)
                        self.tools = await self._list_tools(client)
                        self._client = client
                        if not ready.done():
                            ready.set_result(None)
                        await self._stop.wait()
                    return
                except Exception:
                    if ready.done() or index == len(kinds) - 1:
                        raise
        except BaseException as exc:
            self._client = None
            if not ready.done():
                failure = (
                    exc if isinstance(exc, Exception) else ConnectionError("connection stopped")
                )
                ready.set_exception(failure)
            elif isinstance(exc, Exception) and self.status == "connected":
                self._set("disconnected", describe(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None

    async def _open(self, stack: AsyncExitStack, kind: TransportKind) -> Client:
        cfg = self.config
        transport: Any
        if kind == "stdio":
            assert cfg.command is not None
            if cfg.cwd and not os.path.isdir(cfg.cwd):
                raise ConnectionError(f"configured cwd does not exist: {cfg.cwd}")
            self.process = ProcessState()
            # headwire's own secrets are scrubbed; the config's ``env`` may set them explicitly.
            launch = StdioLaunch(cfg.command, cfg.args, {**tool_environment(), **cfg.env}, cfg.cwd)
            transport = stdio_transport(launch, self.process, self._on_transport_closed, self.debug)
        elif kind == "http":
            assert cfg.url is not None
            http = httpx2.AsyncClient(headers=cfg.headers, timeout=HTTP_TIMEOUT)
            await stack.enter_async_context(http)
            transport = streamable_http_client(cfg.url, http_client=http)
        else:
            assert cfg.url is not None
            transport = sse_client(cfg.url, headers=cfg.headers or None)
        client = Client(
            transport,
            mode="legacy",
            cache=None,
            client_info=types.Implementation(name="headwire", version=self.version),
        )
        await stack.enter_async_context(client)
        return client

    @staticmethod
    async def _list_tools(client: Client) -> list[types.Tool]:
        if client.server_capabilities.tools is None:
            return []
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _halt(self, grace_s: float = STOP_WAIT_S) -> None:
        """Stop the connection task: politely, then by cancelling it after ``grace_s``."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._stop.set()
        if self.status != "connected":
            # still starting (or gone): no polite shutdown to wait for, stop the process now
            grace_s = 0
            if self.process is not None:
                self.process.hurry = True
        if not runner.done() and grace_s > 0:
            await asyncio.wait({runner}, timeout=grace_s)
        if not runner.done():
            runner.cancel()
            await asyncio.wait({runner}, timeout=STOP_WAIT_S)
        if runner.done() and not runner.cancelled():
            runner.exception()  # retrieved: a failure was already recorded as the status

    async def aclose(self) -> None:
        """Shut the server down (a stdio process is stopped and reaped)."""
        await self._halt()
        if self.status == "connected":
            self._set("disconnected", "closed")

    # -- calls ------------------------------------------------------------------------------

    async def _restart(self) -> None:
        async with self._restart_lock:
            if self.status == "connected":
                return
            previous = self.error
            await self._halt()
            if not await self.start():
                raise McpCallError(
                    f"the server is disconnected ({previous}) and restarting it "
                    f"failed: {self.error}"
                )

    async def call(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        timeout_s: float,
        progress: Progress | None,
        cancelled: asyncio.Event,
    ) -> Any:
        """Call ``tool``; returns the SDK ``CallToolResult`` or raises :class:`McpCallError`."""
        if self.status == "disconnected":
            await self._restart()
        client = self._client
        if client is None or self.status != "connected":
            raise McpCallError(
                f"the server is {self.status}" + (f" ({self.error})" if self.error else "")
            )

        sink = progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if sink is not None:
                try:
                    sink({"progress": progress, "total": total, "message": message})
                except Exception as exc:  # a broken sink must not break the call
                    warn(f"headwire: MCP progress hook failed: {exc}")

        call = asyncio.ensure_future(
            client.call_tool(
                tool, args, progress_callback=on_progress if progress is not None else None
            )
        )
        stop = asyncio.ensure_future(_wait_event(cancelled))
        try:
            done, _ = await asyncio.wait(
                {call, stop}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            # headwire is stopping (a signal) with this call in flight: a busy server may be
            # slow to leave on end of input, so its shutdown goes to SIGTERM sooner.
            if self.process is not None:
                self.process.urgent = True
            raise
        finally:
            stop.cancel()
            if not call.done():
                call.cancel()
                await asyncio.wait({call}, timeout=CANCEL_WAIT_S)
        if call not in done or call.cancelled():
            if cancelled.is_set():
                raise McpCallError("cancelled by the user", "cancelled")
            raise McpCallError(f"timed out after {round(timeout_s * 1000)} ms", "timeout")
        exc = call.exception()
        if exc is None:
            return call.result()
        reason = describe(exc)
        if _is_connection_loss(exc):
            reason += await self._exit_note()
            self._set("disconnected", reason)
        raise McpCallError(reason)


class McpManager:
    """All configured servers: started together, their tools, statuses and shutdown."""

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        *,
        version: str = "0",
        debug: bool = False,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        note: Callable[[str], None] = warn,
    ) -> None:
        self.note = note
        if not debug:  # the SDK logs transport hiccups as warnings; failures are ours to report
            for logger in ("mcp", "client"):
                logging.getLogger(logger).setLevel(logging.CRITICAL)
        self.on_status_change: Callable[[], None] | None = None
        self.connections = {
            name: ServerConnection(
                cfg,
                version=version,
                debug=debug,
                connect_timeout_s=connect_timeout_s,
                on_change=self._changed,
            )
            for name, cfg in servers.items()
        }
        self._tools: list[McpTool] = []

    def _changed(self) -> None:
        if self.on_status_change is not None:
            self.on_status_change()

    async def start(self) -> None:
        """Connect every server concurrently; failures become a note and status ``failed``."""
        await asyncio.gather(*(conn.start() for conn in self.connections.values()))
        for conn in self.connections.values():
            if conn.status == "failed":
                self.note(f"headwire: MCP server '{conn.name}' failed to start: {conn.error}")
        self._tools = self._build_tools()

    def _build_tools(self) -> list[McpTool]:
        tools: list[McpTool] = []
        seen: set[str] = set()
        for conn in self.connections.values():
            cfg = conn.config
            for spec in conn.tools:
                if cfg.include_tools is not None and spec.name not in cfg.include_tools:
                    continue
                if spec.name in cfg.exclude_tools:
                    continue
                problem = schema_problem(spec.input_schema)
                if problem is not None:  # checked where it enters: never a crash mid-turn
                    self.note(
                        f"headwire: MCP tool '{spec.name}' of server '{conn.name}' is skipped: "
                        f"its inputSchema is not usable: {problem}"
                    )
                    continue
                hints = spec.annotations
                tool = McpTool(
                    conn,
                    conn.name,
                    spec.name,
                    spec.description or "",
                    dict(spec.input_schema),
                    trust=cfg.trust,
                    read_only=bool(hints is not None and hints.read_only_hint),
                    timeout_ms=cfg.timeout_ms,
                )
                if tool.name in seen:
                    self.note(
                        f"headwire: MCP tool '{spec.name}' of server '{conn.name}' is "
                        f"skipped: the name {tool.name} is already taken"
                    )
                    continue
                seen.add(tool.name)
                tools.append(tool)
        return tools

    def tools(self) -> list[Tool]:
        """The connected servers' tools (``mcp__<server>__<tool>``)."""
        return list(self._tools)

    def statuses(self) -> list[dict[str, Any]]:
        """``system/init``'s ``mcp_servers``: ``[{"name", "status"}]`` in configuration order."""
        return [{"name": name, "status": conn.status} for name, conn in self.connections.items()]

    async def aclose(self) -> None:
        """Shut every server down."""
        await asyncio.gather(*(conn.aclose() for conn in self.connections.values()))

    async def __aenter__(self) -> McpManager:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
