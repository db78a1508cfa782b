"""Message ids: canonical version-4 UUIDs, never repeated in a process or its forked children."""

from __future__ import annotations

import os
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.runtime.ids import new_uuid


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 2000))
def test_ids_are_canonical_version_4_uuids_and_never_repeat(count: int) -> None:
    """Invariant: every id parses as a version-4, RFC 4122 UUID whose canonical text is the id
    itself, and no two ids drawn in a process are equal."""
    ids = [new_uuid() for _ in range(count)]
    for text in ids:
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == text
    assert len(set(ids)) == count


def test_a_forked_child_draws_ids_its_parent_never_will() -> None:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report a few ids and leave at once
        os.close(read_fd)
        os.write(write_fd, ",".join(new_uuid() for _ in range(3)).encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        child = pipe.read().decode().split(",")
    os.waitpid(pid, 0)
    parent = [new_uuid() for _ in range(3)]
    assert {c[:24] for c in child}.isdisjoint({p[:24] for p in parent})  # another prefix
