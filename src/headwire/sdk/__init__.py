"""``headwire.sdk``: an async Python client for persistent stream-JSON sessions.

It drives ``headwire`` (the default) or any compatible CLI, including the upstream Qwen Code
``qwen``, over ``--input-format stream-json --output-format stream-json``.  Unlike the
published ``qwen-code-sdk`` it has no line-length limit: stdout is split on newlines by hand,
so a 100 MB line parses.

One turn::

    async for message in query("fix the tests", Options(model="...")):
        ...

Many turns::

    async with Session(Options(can_use_tool=ask)) as session:
        async for message in session.turn("first"):
            ...
        await session.set_model("other")
        async for message in session.turn("second"):
            ...
"""

from headwire.sdk.client import (
    Allow,
    ControlError,
    Deny,
    Options,
    PermissionCallback,
    PermissionContext,
    ProcessError,
    SDKError,
    Session,
    build_args,
    query,
)
from headwire.sdk.messages import (
    AssistantMessage,
    CompactMetadata,
    ContentBlock,
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    Message,
    MessageParseError,
    PermissionDenial,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolResultBound,
    ToolUseBlock,
    UnknownBlock,
    UnknownMessage,
    UserMessage,
    parse_message,
)
from headwire.sdk.transport import SubprocessTransport, TransportError

__all__ = [
    "Allow",
    "AssistantMessage",
    "CompactMetadata",
    "ContentBlock",
    "ControlCancelRequest",
    "ControlError",
    "ControlRequest",
    "ControlResponse",
    "Deny",
    "Message",
    "MessageParseError",
    "Options",
    "PermissionCallback",
    "PermissionContext",
    "PermissionDenial",
    "ProcessError",
    "ResultMessage",
    "SDKError",
    "Session",
    "StreamEvent",
    "SubprocessTransport",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolResultBound",
    "ToolUseBlock",
    "TransportError",
    "UnknownBlock",
    "UnknownMessage",
    "UserMessage",
    "build_args",
    "parse_message",
    "query",
]
