"""An MCP server on the official Python SDK (2.x) whose tool asks by pushing
`elicitation/create` (`ctx.elicit`), the way servers of the initialize era
ask: the gateway's stdio upstream in `crates/tessera-gateway/tests`.

Tool `increase-counter` asks for an amount, then a confirmation, and answers
"Counter increased by A; next value is N" (or "Counter increase cancelled.").
Tool `grow` adds a tool `grown` and says so (`notifications/tools/list_changed`).

usage: python_elicit_server.py   (serves on stdin/stdout)
"""

from pydantic import BaseModel, Field

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("py-elicit-counter")


class Amount(BaseModel):
    amount: float = Field(description="The amount to add to the current value")


class Confirmation(BaseModel):
    confirm: bool = Field(title="Confirm increase")


@server.tool(name="increase-counter", description="Increases a counter after asking by how much, then for a yes")
async def increase_counter(current: float, ctx: Context) -> str:
    amount = await ctx.elicit("By how much should the counter increase?", Amount)
    if amount.action != "accept":
        return "Counter increase cancelled."
    by = amount.data.amount
    confirmation = await ctx.elicit(f"Increase {current:g} by {by:g}?", Confirmation)
    if confirmation.action != "accept" or not confirmation.data.confirm:
        return "Counter increase cancelled."
    return f"Counter increased by {by:g}; next value is {current + by:g}"


def grown() -> str:
    """Added while serving."""
    return "grown"


@server.tool(name="grow", description="Adds the tool `grown` and tells the client its tools changed")
async def grow(ctx: Context) -> str:
    server.add_tool(grown, name="grown")
    await ctx.session.send_tool_list_changed()
    return "added grown"


if __name__ == "__main__":
    server.run("stdio")
