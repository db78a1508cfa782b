"""The Agent Client Protocol front end (``headwire --acp``): JSON-RPC 2.0 over stdio.

* :mod:`headwire.acp.jsonrpc`: sans-I/O framing (parse a line, build a frame);
* :mod:`headwire.acp.updates`: ``session/update`` payloads and other ACP shapes;
* :mod:`headwire.acp.replay`: ``session/load``'s record-by-record replay of a recording;
* :mod:`headwire.acp.server`: the server (sessions, prompts, permissions, cancellation).
"""
