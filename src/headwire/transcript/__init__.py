"""Session recordings as people read them (pure: no I/O).

* :mod:`~headwire.transcript.builder`: records to a :class:`Transcript`
  (:mod:`~headwire.transcript.model`) of bounded excerpts;
* :mod:`~headwire.transcript.terminal`, :mod:`~headwire.transcript.markdown`,
  :mod:`~headwire.transcript.html_page`, :mod:`~headwire.transcript.json_doc`: renderings.

Reading files (recordings, artifacts) is :mod:`headwire.runtime.store.sessions`'s job.
"""

from headwire.transcript.builder import TranscriptBuilder, build_transcript
from headwire.transcript.excerpt import Excerpt, excerpt_of, fair_cap, shrink
from headwire.transcript.html_page import render_html
from headwire.transcript.json_doc import render_json
from headwire.transcript.markdown import render_markdown
from headwire.transcript.model import (
    Text,
    ToolCall,
    ToolResult,
    Transcript,
    Turn,
)
from headwire.transcript.terminal import render_terminal

__all__ = [
    "Excerpt",
    "Text",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "TranscriptBuilder",
    "Turn",
    "build_transcript",
    "excerpt_of",
    "fair_cap",
    "render_html",
    "render_json",
    "render_markdown",
    "render_terminal",
    "shrink",
]
