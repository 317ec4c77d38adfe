// An initialize-era-only MCP server over stdio, from the TypeScript SDK 1.x:
// it knows no server/discover and asks with pushed elicitation/create requests.
// Tool `greet` asks for a name, then answers "Hello, NAME!" (or "No greeting.").

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'legacy-greeter', version: '1.0.0' });
server.registerTool('greet', { description: 'Greets whoever answers the form' }, async () => {
    const answer = await server.server.elicitInput({
        mode: 'form',
        message: 'Who is there?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    const text = answer.action === 'accept' ? `Hello, ${answer.content.name}!` : 'No greeting.';
    return { content: [{ type: 'text', text }] };
});
await server.connect(new StdioServerTransport());
