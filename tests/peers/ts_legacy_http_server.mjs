// An initialize-era-only MCP server over Streamable HTTP, from the TypeScript
// SDK 1.x: sessions (Mcp-Session-Id), no server/discover, and questions pushed
// as elicitation/create requests on the call's SSE stream. Tool `greet` asks
// for a name, then answers "Hello, NAME!" (or "No greeting.").
//
// Usage: node ts_legacy_http_server.mjs PORT   (0: any free port)
// Prints "ready http://127.0.0.1:PORT/mcp" once it listens.

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

function greeter() {
    const server = new McpServer({ name: 'legacy-http-greeter', version: '1.0.0' });
    server.registerTool('greet', { description: 'Greets whoever answers the form' }, async (extra) => {
        // Related to the call, the question goes out on the call's own stream.
        const answer = await server.server.elicitInput(
            {
                mode: 'form',
                message: 'Who is there?',
                requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
            },
            { relatedRequestId: extra.requestId },
        );
        const text = answer.action === 'accept' ? `Hello, ${answer.content.name}!` : 'No greeting.';
        return { content: [{ type: 'text', text }] };
    });
    return server;
}

const sessions = new Map();

const httpServer = http.createServer(async (req, res) => {
    if (req.url !== '/mcp') {
        res.writeHead(404).end();
        return;
    }
    let body;
    if (req.method === 'POST') {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
            body = undefined;
        }
    }
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
        if (req.method !== 'POST' || !isInitializeRequest(body)) {
            res.writeHead(400, { 'content-type': 'application/json' }).end(
                JSON.stringify({
                    jsonrpc: '2.0',
                    error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
                    id: null,
                }),
            );
            return;
        }
        transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        await greeter().connect(transport);
    }
    await transport.handleRequest(req, res, body);
});

httpServer.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    console.log(`ready http://127.0.0.1:${httpServer.address().port}/mcp`);
});
