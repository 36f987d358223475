"""A client of the 2025 protocol (the official SDK 1.x), run in a venv of its own.

`python mcp1_subscriber.py SERVER_PYTHON DB` starts `SERVER_PYTHON -m ollie_nb.tasks serve
--db DB`, prints the handshake's facts as one JSON line, subscribes to tasks://events
(printing `subscribed`), waits for one `notifications/resources/updated` (`updated URI`),
unsubscribes, makes a change itself and checks that no update follows (`quiet`).
"""

from __future__ import annotations

import json
import os
import sys

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

URI = "tasks://events"


async def main(server_python: str, db: str) -> None:
    params = StdioServerParameters(
        command=server_python,
        args=["-m", "ollie_nb.tasks", "serve", "--db", db],
        env=dict(os.environ),
    )
    send, updates = anyio.create_memory_object_stream[str](100)

    async def on_message(message: object) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ResourceUpdatedNotification
        ):
            await send.send(str(message.root.params.uri))

    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        init = await session.initialize()
        prompts = await session.list_prompts()
        facts = {
            "protocol": init.protocolVersion,
            "subscribe": init.capabilities.resources.subscribe,
            "name": init.serverInfo.name,
            "version": init.serverInfo.version,
            "prompts": [p.name for p in prompts.prompts],
        }
        print(json.dumps(facts), flush=True)
        await session.subscribe_resource(URI)
        print("subscribed", flush=True)
        with anyio.fail_after(30):
            print("updated", await updates.receive(), flush=True)
        await session.unsubscribe_resource(URI)
        # A change through this very server signals before the call returns: any update
        # still sent to this client would be waiting by the time the result is back.
        await session.call_tool("task_create", {"title": "after unsubscribing"})
        await session.send_ping()
        try:
            late = updates.receive_nowait()
        except anyio.WouldBlock:
            late = None
        print("quiet" if late is None else f"late update {late}", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
