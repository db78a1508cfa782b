"""Outbound HTTP for tools: which addresses may be reached, checked where the socket connects.

:func:`is_public_address` says whether an IP address is on the public internet: loopback,
private (RFC 1918, unique-local), link-local (including cloud metadata at 169.254.169.254),
carrier-grade NAT, multicast, reserved and unspecified addresses are not; an IPv4 address
mapped into IPv6 is judged as the IPv4 address.

:func:`guarded_client` returns an ``httpx.AsyncClient`` whose every TCP connection goes through
:class:`GuardedBackend`: the host name is resolved there, *every* address it resolves to is
checked, and the socket is opened to a checked address.  So the check holds after DNS
resolution, on every redirect hop (each hop connects anew) and against DNS rebinding (the
address checked is the address connected to).  Environment proxies are not used
(``trust_env=False``): a proxy would connect on our behalf to an address never checked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from headwire.errors import ToolError

_NOT_PUBLIC_V4 = tuple(
    ipaddress.ip_network(n)
    for n in ("0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4")
)


def is_public_address(address: str) -> bool:
    """Whether ``address`` (an IPv4/IPv6 literal, optionally ``%scope``) is publicly routable."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0].strip("[]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, ipaddress.IPv4Address) and any(ip in net for net in _NOT_PUBLIC_V4):
        return False
    return bool(ip.is_global) and not ip.is_multicast and not ip.is_unspecified


class AddressRefused(httpcore.ConnectError, ToolError):
    """A connection was refused by the address policy; ``str()`` says which address."""


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with name resolution and the address check in front."""

    def __init__(self, allow_private: bool) -> None:
        self.allow_private = allow_private
        self._inner = httpcore.AnyIOBackend()

    async def _resolve(self, host: str, port: int) -> list[str]:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from exc
        addresses: list[str] = []
        for info in infos:
            address = str(info[4][0])
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise httpcore.ConnectError(f"cannot resolve {host}")
        return addresses

    def check(self, host: str, addresses: Iterable[str]) -> None:
        """Raise :class:`AddressRefused` unless every address may be reached."""
        if self.allow_private:
            return
        for address in addresses:
            if not is_public_address(address):
                shown = host if host == address else f"{host} ({address})"
                raise AddressRefused(
                    f"refusing to connect to {shown}: it is not a public internet address "
                    "(set tools.webFetch.allowPrivateNetwork in your user settings to allow it)"
                )

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Resolve ``host``, check every address, connect to the first that answers."""
        addresses = await self._resolve(host, port)
        self.check(host, addresses)
        last: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        """Unix sockets are never used by tools."""
        raise httpcore.ConnectError("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        """Delegate to anyio."""
        await self._inner.sleep(seconds)


class _GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool on a :class:`GuardedBackend`."""

    def __init__(self, backend: GuardedBackend) -> None:
        super().__init__(trust_env=False, retries=0)
        # httpx builds its pool without a way to pass a network backend; this replaces it
        # with the same pool class on ours (the pool is httpx's documented extension point).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl.create_default_context(),
            max_connections=10,
            network_backend=backend,
        )


def guarded_client(*, allow_private: bool, timeout_s: float, headers: dict[str, str]) -> Any:
    """An ``httpx.AsyncClient`` whose connections obey the address policy; redirects are not
    followed (the caller checks and follows them itself)."""
    backend = GuardedBackend(allow_private)
    return httpx.AsyncClient(
        transport=_GuardedTransport(backend),
        timeout=httpx.Timeout(timeout_s),
        follow_redirects=False,
        trust_env=False,
        headers=headers,
    )
