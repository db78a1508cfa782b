"""Scrubbing registered secrets out of text: the second line of defence behind a hidden key.

headwire keeps its API key out of every tool's reach (:mod:`headwire.io.credentials`), but a
tool can still meet it elsewhere (a ``.env`` file, a server that echoes it).  Every tool
outcome therefore passes :func:`~headwire.runtime.tools.redacted.redact_outcome` before it
reaches the model, a wire, the recording or an artifact, and every artifact passes
:func:`redact` as it is saved.

What is replaced by :data:`MASK`, for each secret registered with
:func:`headwire.runtime.environment.register_secret` that is at least :data:`MIN_FRAGMENT`
characters long:

* every whole occurrence;
* every fragment that one cut leaves: a prefix or a suffix of the secret of at least
  :data:`MIN_FRAGMENT` characters, wherever it stands (a ``head -c``, a truncated line, a
  head/tail preview all cut at unknown places).

Shorter secrets are not scrubbed from output (too many innocent matches); they are still kept
out of tools' environments.  The search is a C-level substring search for the first and last
:data:`MIN_FRAGMENT` characters, then a few slice comparisons per hit: no per-character loop.
"""

from __future__ import annotations

from typing import TypeVar

from headwire.runtime.environment import registered_secrets

MIN_FRAGMENT = 8
"""Fragments of a secret at least this long are scrubbed."""
MASK = "***"

S = TypeVar("S", str, bytes)


def _common_prefix(text: S, start: int, secret: S) -> int:
    """The length of the longest prefix of ``secret`` found at ``text[start:]``."""
    lo, hi = 0, min(len(secret), len(text) - start)
    while lo < hi:  # a prefix of a matching prefix matches: binary search on the length
        mid = (lo + hi + 1) // 2
        if text[start : start + mid] == secret[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(text: S, end: int, secret: S) -> int:
    """The length of the longest suffix of ``secret`` found ending at ``text[:end]``."""
    lo, hi = 0, min(len(secret), end)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text[end - mid : end] == secret[len(secret) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _spans(text: S, secret: S) -> list[tuple[int, int]]:
    """Where ``text`` holds ``secret`` or a prefix or suffix of it of at least MIN_FRAGMENT."""
    spans: list[tuple[int, int]] = []
    head, tail = secret[:MIN_FRAGMENT], secret[-MIN_FRAGMENT:]
    at = text.find(head)
    while at >= 0:
        length = _common_prefix(text, at, secret)
        spans.append((at, at + length))
        at = text.find(head, at + 1)
    at = text.find(tail)
    while at >= 0:
        end = at + MIN_FRAGMENT
        spans.append((end - _common_suffix(text, end, secret), end))
        at = text.find(tail, at + 1)
    return spans


def _secrets_as(kind: type[S]) -> list[S]:
    found = [s for s in registered_secrets() if len(s) >= MIN_FRAGMENT]
    if kind is bytes:
        return [_utf8(s) for s in found]  # type: ignore[misc]
    return found  # type: ignore[return-value]


def has_secrets() -> bool:
    """Whether any secret long enough to scrub is registered (else :func:`redact` is a no-op)."""
    return bool(_secrets_as(str))


def _utf8(secret: str) -> bytes:
    """The bytes a secret stands for (a surrogate-escaped byte of the environment as itself)."""
    try:
        return secret.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return secret.encode("utf-8", "surrogatepass")


def redact(text: S) -> S:
    """``text`` with every registered secret, and every prefix or suffix of one of at least
    :data:`MIN_FRAGMENT` characters, replaced by :data:`MASK` (``str`` or UTF-8 ``bytes``).

    Invariant: for every registered secret ``s`` and every cut ``0 <= i <= len(s)``, neither
    ``s``, nor ``s[:i]`` nor ``s[i:]`` when at least MIN_FRAGMENT long, appears in the result.
    The same object comes back when there is nothing to replace.
    """
    secrets = _secrets_as(type(text))
    if not secrets or not text:
        return text
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        spans += _spans(text, secret)
    if not spans:
        return text
    spans.sort()
    mask: S = MASK.encode() if isinstance(text, bytes) else MASK
    parts: list[S] = []
    position = 0
    cut_start, cut_end = spans[0]
    for start, end in spans[1:]:
        if start <= cut_end:  # overlapping or touching: one mask
            cut_end = max(cut_end, end)
            continue
        parts += [text[position:cut_start], mask]
        position = cut_end
        cut_start, cut_end = start, end
    parts += [text[position:cut_start], mask, text[cut_end:]]
    return text[:0].join(parts)
