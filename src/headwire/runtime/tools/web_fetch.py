"""``web_fetch``: fetch a URL and hand its content, as text, to the model.

Qwen Code 0.24.4's name and parameters (``url``, ``prompt``, ``format``).  As upstream, the
page goes through a second, tool-free call to the session's model, which answers the call's
``prompt`` from it (:attr:`~headwire.runtime.tools.base.ToolContext.ask_model`, inside the
fetch's time limit, its usage counted toward the budget); the model is told that answer with
the fetch metadata.  When that side call fails (or no model is at hand), the content itself is
returned with the request, so the session's own model answers from it.

Limits: :data:`FETCH_TIMEOUT_S` for the whole fetch, :data:`MAX_RESPONSE_BYTES` of body (as
received and as decoded, through every ``Content-Encoding`` layer, counted as it is produced:
:mod:`headwire.runtime.http_body`),
:data:`MAX_REDIRECTS` redirects (only to the same host, scheme and port; another host is
reported to the model, which may fetch it with a new call), :data:`MAX_CONTENT_CHARS` of text.
HTML becomes Markdown (markdownify on BeautifulSoup, scripts, styles and images dropped; at
most :data:`MAX_HTML_BYTES` of it is converted); other text is passed as it is; binary content
is saved as an artifact and its path given.  Addresses that are not public (loopback, private,
link-local...) are refused, after DNS resolution and on every hop, unless the user settings
allow them (:mod:`headwire.runtime.tools.netguard`).  Plain ``http://`` URLs to public hosts
without a port are tried as ``https://`` first, as upstream does.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from headwire import __version__
from headwire.errors import ToolError
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.paths import approval_needed, check_args, failure

if TYPE_CHECKING:
    import httpx

FETCH_TIMEOUT_S = 60.0
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 10
MAX_CONTENT_CHARS = 100_000
MAX_HTML_BYTES = 1024 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ACCEPT = {
    "markdown": "text/markdown, */*;q=0.1",
    "html": "text/html, */*;q=0.1",
    "text": "text/plain, */*;q=0.1",
    "auto": "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1",
}
_TEXT_TYPES = re.compile(r"^(text/|application/(.*\+)?(json|xml|javascript|x-www-form-urlencoded))")
_DROPPED_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "object", "embed")


class FetchFailed(ToolError):
    """The fetch failed; ``str()`` is the reason the model reads."""


def _host_port(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


def same_origin(a: str, b: str) -> bool:
    """Whether a redirect from ``a`` to ``b`` stays on the same scheme, host and port
    (``www.`` ignored), the only redirects followed."""
    sa, ha, pa = _host_port(a)
    sb, hb, pb = _host_port(b)
    return (sa, ha.removeprefix("www."), pa) == (sb, hb.removeprefix("www."), pb)


def side_prompt(prompt: str, url: str, content: str) -> str:
    """The side question that answers a call's ``prompt`` about a fetched page (its content
    already at most :data:`MAX_CONTENT_CHARS` characters)."""
    return (
        f"The text below was fetched from {url}. Using only that text, answer this request; "
        "quote exact figures and names, and say so when the text does not answer it.\n\n"
        f"Request: {prompt}\n\n---\n{content}\n---"
    )


def rewrite_github_blob(url: str) -> str:
    """``github.com/o/r/blob/...`` as its raw file URL; other URLs unchanged."""
    parts = urlsplit(url)
    if (parts.hostname or "").lower() not in ("github.com", "www.github.com"):
        return url
    path = re.sub(r"^(/[^/]+/[^/]+)/blob/", r"\1/", parts.path)
    if path == parts.path:
        return url
    return parts._replace(netloc="raw.githubusercontent.com", path=path).geturl()


def _is_private_host(host: str) -> bool:
    from headwire.runtime.tools.netguard import is_public_address

    if host in ("localhost",) or host.endswith((".localhost", ".local", ".internal", ".lan")):
        return True
    if "." not in host and ":" not in host:
        return True
    try:
        return not is_public_address(host)
    except ValueError:
        return False


def html_to_markdown(html: str) -> str:
    """HTML as Markdown: links and structure kept, scripts, styles and images dropped."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(list(_DROPPED_TAGS)):
        tag.decompose()
    converter = MarkdownConverter(heading_style="ATX", strip=["img"])
    text: str = converter.convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def truncate_content(text: str) -> str:
    """At most :data:`MAX_CONTENT_CHARS` characters, with a note when cut."""
    if len(text) <= MAX_CONTENT_CHARS:
        return text
    return (
        f"{text[:MAX_CONTENT_CHARS]}\n\n[Content truncated: showing the first "
        f"{MAX_CONTENT_CHARS:,} of {len(text):,} characters]"
    )


def _looks_binary(body: bytes) -> bool:
    head = body[:8192]
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a character cut at the end of the sample is fine
    return False


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


class WebFetchTool:
    """Fetch a URL (see the module docstring)."""

    name: str = "web_fetch"
    display_name: str = "WebFetch"
    description: str = (
        "Downloads a web page or file from a URL and returns its content as text for you to "
        "answer the prompt from.\n"
        "- HTML is converted to Markdown (links kept); plain text, JSON and Markdown are "
        "returned as they are; binary files are saved to disk and their path returned.\n"
        "- The result starts with the HTTP status, content type and size.\n"
        "- Long content is cut to the first 100,000 characters.\n"
        "- Redirects to another host are not followed: the result gives the new URL, which "
        "you may fetch with another call.\n"
        "- http:// URLs of public hosts are upgraded to https://. Local and private-network "
        "addresses are refused unless the user allowed them.\n"
        "- It cannot reach pages behind a login; prefer an MCP tool (mcp__...) for those."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "properties": {
            "url": {"description": "The full http:// or https:// URL to fetch.", "type": "string"},
            "prompt": {
                "description": "What you want to learn from the content.",
                "type": "string",
            },
            "format": {
                "description": (
                    "Which format to ask the server for (the Accept header): auto (the "
                    "default, prefers Markdown), markdown, html or text. The result is text "
                    "in every case."
                ),
                "type": "string",
                "enum": ["auto", "markdown", "html", "text"],
            },
        },
        "required": ["url", "prompt"],
        "type": "object",
    }
    kind: ToolKind = "fetch"

    def __init__(self, *, allow_private: bool = False) -> None:
        self.allow_private = allow_private

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus upstream's URL rules."""
        problem = check_args(self.parameters, args)
        if problem:
            return problem
        url = args["url"].strip()
        if not url:
            return "The 'url' parameter cannot be empty."
        if not re.match(r"(?i)^https?://", url):
            return "The 'url' must be a valid URL starting with http:// or https://."
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018  (raises on a malformed port)
        except ValueError:
            return "The 'url' is malformed and could not be parsed."
        if not parts.hostname:
            return "The 'url' is malformed and could not be parsed."
        if parts.username or parts.password:
            return "The 'url' must not include credentials."
        if not args["prompt"].strip():
            return "The 'prompt' parameter cannot be empty."
        fmt = args.get("format", "auto")
        if fmt not in _ACCEPT:
            return "params/format must be equal to one of the allowed values"
        args["url"] = url
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """A fetch sends the URL to a third party: it asks unless ``yolo`` (as upstream)."""
        return approval_needed(self.kind, mode)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Fetch, bounded by time and cancellable through ``ctx.cancelled``."""
        url = rewrite_github_blob(args["url"])
        started = time.monotonic()
        limit = FETCH_TIMEOUT_S if ctx.timeout_s is None else min(FETCH_TIMEOUT_S, ctx.timeout_s)
        fetch = asyncio.ensure_future(self._fetch(url, args, ctx))
        stop = asyncio.ensure_future(ctx.cancelled.wait())
        try:
            done, _ = await asyncio.wait(
                {fetch, stop}, timeout=limit, return_when="FIRST_COMPLETED"
            )
        finally:
            stop.cancel()
            if not fetch.done():
                fetch.cancel()
                with contextlib.suppress(BaseException):
                    await fetch
        elapsed = f" in {time.monotonic() - started:.1f}s"
        if fetch not in done or fetch.cancelled():
            reason = "cancelled" if ctx.cancelled.is_set() else f"timed out after {limit:g}s"
            return self._error(args["url"], reason, elapsed)
        try:
            text, display = fetch.result()
        except FetchFailed as exc:
            return self._error(args["url"], str(exc), elapsed)
        return ToolOutcome(llm_text=text, display=display + elapsed)

    @staticmethod
    def _error(url: str, reason: str, elapsed: str) -> ToolOutcome:
        message = f"Error during fetch for {url}: {reason}"
        return failure(
            f"Error: {message}", f"Error: {message}{elapsed}", message, "web_fetch_failed"
        )

    async def _fetch(self, url: str, args: dict[str, Any], ctx: ToolContext) -> tuple[str, str]:
        import httpx  # imported on first use: a session that never fetches does not pay for it

        from headwire.runtime.http_body import ACCEPT_ENCODING
        from headwire.runtime.tools.netguard import guarded_client

        headers = {
            "Accept": _ACCEPT[args.get("format", "auto")],
            "Accept-Encoding": ACCEPT_ENCODING,
            "User-Agent": f"headwire/{__version__}",
        }
        scheme, host, port = _host_port(url)
        upgraded = None
        if scheme == "http" and port is None and not _is_private_host(host):
            upgraded, url = url, "https://" + url[len("http://") :]
        async with guarded_client(
            allow_private=self.allow_private, timeout_s=FETCH_TIMEOUT_S, headers=headers
        ) as client:
            try:
                return await self._get(client, url, args, ctx)
            except FetchFailed as exc:
                if upgraded is None or not isinstance(exc.__cause__, httpx.ConnectError):
                    raise
                return await self._get(client, upgraded, args, ctx)

    async def _get(
        self, client: httpx.AsyncClient, url: str, args: dict[str, Any], ctx: ToolContext
    ) -> tuple[str, str]:
        import httpx

        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            try:
                async with client.stream("GET", current) as response:
                    if response.status_code in _REDIRECTS:
                        location = response.headers.get("location")
                        if not location:
                            raise FetchFailed("redirect without a Location header")
                        target = urljoin(current, location)
                        if not same_origin(current, target):
                            return self._cross_host(args, current, target, response.status_code)
                        current = target
                        continue
                    if not 200 <= response.status_code < 300:
                        raise FetchFailed(
                            f"Request failed with status code {response.status_code} "
                            f"{response.reason_phrase}".rstrip()
                        )
                    body = await self._read(response)
                    return await self._render(args, current, response, body, ctx)
            except httpx.HTTPError as exc:
                raise FetchFailed(str(exc) or type(exc).__name__) from exc
        raise FetchFailed(f"Too many redirects (more than {MAX_REDIRECTS})")

    @staticmethod
    async def _read(response: httpx.Response) -> bytes:
        """The body, decoded in bounded steps: the cap holds for what is decoded, not only
        for what was received (:mod:`headwire.runtime.http_body`)."""
        from headwire.runtime.http_body import BodyTooLarge, BodyUndecodable, read_body

        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
            raise FetchFailed(
                f"Response too large: {declared} bytes exceeds the {MAX_RESPONSE_BYTES}-byte limit"
            )
        try:
            return await read_body(response, MAX_RESPONSE_BYTES)
        except BodyTooLarge:
            raise FetchFailed(
                f"Response too large: more than the {MAX_RESPONSE_BYTES}-byte limit"
                + (" once decoded" if response.headers.get("content-encoding") else "")
            ) from None
        except BodyUndecodable as exc:
            raise FetchFailed(f"Cannot decode the response: {exc}") from None

    @staticmethod
    def _cross_host(
        args: dict[str, Any], current: str, target: str, status: int
    ) -> tuple[str, str]:
        host = urlsplit(target).hostname or target
        text = (
            "The URL redirects to another host (or scheme or port); the redirect was not "
            f"followed.\n\nOriginal URL: {current}\nRedirect URL: {target}\nStatus: {status}\n\n"
            f'To fetch it, call web_fetch again with url "{target}" and prompt '
            f'"{args["prompt"]}".'
        )
        return text, f"Redirected to {host} ({status}); not followed"

    @staticmethod
    async def _render(
        args: dict[str, Any],
        final: str,
        response: httpx.Response,
        body: bytes,
        ctx: ToolContext,
    ) -> tuple[str, str]:
        content_type = response.headers.get("content-type", "")
        media = content_type.split(";", 1)[0].strip().lower()
        where = f"URL: {args['url']}" + (f" (final: {final})" if final != args["url"] else "")
        header = (
            f"{where}\nStatus: {response.status_code} {response.reason_phrase or 'OK'} | "
            f"Content-Type: {content_type or 'unknown'} | Size: {len(body):,} bytes"
        )
        host = urlsplit(args["url"]).hostname or args["url"]
        display = f"Received {_size(len(body))} ({response.status_code}) from {host}"
        charset = response.charset_encoding or "utf-8"
        if media and not _TEXT_TYPES.match(media) and _looks_binary(body):
            path = ctx.artifacts.save("web_fetch", body)
            note = f"[Binary content ({media}, {_size(len(body))}) saved to {path}.]"
            return f"{header}\n\n{note}", f"{display}; binary saved to {path}"
        try:
            decoded = body.decode(charset, "replace")
        except LookupError:
            decoded = body.decode("utf-8", "replace")
        if media in ("text/html", "application/xhtml+xml"):
            cut = ""
            if len(body) > MAX_HTML_BYTES:
                decoded = decoded[:MAX_HTML_BYTES]
                cut = f"\n\n[Only the first {MAX_HTML_BYTES:,} bytes of the HTML were converted]"
            markdown = await asyncio.to_thread(html_to_markdown, decoded)
            content = truncate_content(markdown) + cut
        else:
            content = truncate_content(decoded)
        if ctx.ask_model is not None:
            answer = await ctx.ask_model(side_prompt(args["prompt"], args["url"], content))
            if answer is not None:
                return f"{header}\n\n{answer}", display + "; answered the prompt"
        text = (
            f"{header}\n\nThe request: {args['prompt']}\n"
            f"Answer it from the fetched content below.\n\n---\n{content}\n---"
        )
        return text, display
