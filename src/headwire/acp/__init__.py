"""The Agent Client Protocol front end (``headwire --acp``): JSON-RPC 2.0 over stdio.

* :mod:`headwire.protocol.jsonrpc` and :mod:`headwire.protocol.acp_peer` (pure, below this
  package): framing, and the connection's lifecycle and ids as a state machine;
* :mod:`headwire.acp.updates`: ``session/update`` payloads and other ACP shapes;
* :mod:`headwire.acp.event_updates`: agent events -> ``session/update`` payloads, the one
  projection the live session and ``session/load`` share;
* :mod:`headwire.acp.session`: a session's state and its subscriber to the agent's events;
* :mod:`headwire.acp.replay`: ``session/load``: a recording turned back into events, streamed;
* :mod:`headwire.acp.server`: the server (sessions, prompts, permissions, cancellation).
"""
