"""The least MCP server the SDK makes: one tool, stdio. bench/startup_bench.py times its start
to tools/list beside `docshelf serve`'s."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return text


if __name__ == "__main__":
    server.run()
