"""Drives the counter with the official MCP Python SDK (2.x) client, over
stdio or Streamable HTTP.

usage: python_client.py MODE SCENARIO COUNTER_BINARY [ARGS...]   (stdio)
       python_client.py MODE SCENARIO http://HOST:PORT/mcp       (HTTP)

MODE is the SDK's connect mode: `legacy` (the initialize handshake, where the
server pushes elicitation/create requests), `auto` (probe with
server/discover, fall back to initialize) or `2026-07-28`. SCENARIO is
`accept`, `decline` (at the first question), `cancel` (at the second),
`cancel-first` or `confirm-false`. The tool called is `increase-counter`,
or the one `MCP_TOOL` names (a gateway's `UP__increase-counter`). Prints the negotiated
protocol version, each form asked, and the tool's final text as JSON lines.
"""

import asyncio
import json
import os
import sys

import mcp.types as types
from mcp import Client, StdioServerParameters


async def main() -> None:
    mode, scenario, command, *args = sys.argv[1:]
    asked = []

    async def elicit(context, params):
        props = params.requested_schema.get("properties", {})
        asked.append({"message": params.message, "fields": sorted(props)})
        if "amount" in props:
            if scenario in ("decline", "cancel-first"):
                return types.ElicitResult(action=scenario.removesuffix("-first"))
            return types.ElicitResult(action="accept", content={"amount": 5})
        if "confirm" in props:
            if scenario == "cancel":
                return types.ElicitResult(action="cancel")
            return types.ElicitResult(action="accept", content={"confirm": scenario != "confirm-false"})
        return types.ElicitResult(action="cancel")

    if command.startswith("http://") or command.startswith("https://"):
        server = command
    else:
        # The SDK passes the child only a safe default environment: forward
        # the key and the OpenTelemetry settings.
        env = {k: v for k, v in os.environ.items() if k.startswith(("MRTR_REQUEST_STATE_KEY", "OTEL_"))}
        server = StdioServerParameters(command=command, args=args, env=env)
    async with Client(server, mode=mode, elicitation_callback=elicit) as client:
        tools = await client.list_tools()
        result = await client.call_tool(os.environ.get("MCP_TOOL", "increase-counter"), {"current": 10})
        print(json.dumps({
            "protocolVersion": client.protocol_version,
            "tools": [t.name for t in tools.tools],
            "asked": asked,
            "text": result.content[0].text,
            "isError": bool(result.is_error),
        }))


asyncio.run(main())
