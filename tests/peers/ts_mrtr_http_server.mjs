// A 2026-07-28 MCP server on the official TypeScript SDK (2.x,
// @modelcontextprotocol/server) over Streamable HTTP: its tool asks with
// multi round-trip requests (inputRequired, a signed requestState). The
// gateway's HTTP upstream in crates/tessera-gateway/tests.
//
// Tool `increase-counter` asks for an amount, then a confirmation, and
// answers "Counter increased by A; next value is N" (or "Counter increase
// cancelled.").
//
// Usage: node ts_mrtr_http_server.mjs PORT   (0: any free port)
// Prints "ready http://127.0.0.1:PORT/mcp" once it listens.

import http from 'node:http';
import {
    McpServer,
    acceptedContent,
    createMcpHandler,
    createRequestStateCodec,
    inputRequired,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

const CANCELLED = 'Counter increase cancelled.';
const AmountAnswer = z.object({ amount: z.number() });
const ConfirmAnswer = z.object({ confirm: z.boolean() });
const text = (message) => ({ content: [{ type: 'text', text: message }] });

const codec = createRequestStateCodec({
    key: 'ts-mrtr-upstream-test-key-0123456789abcdef',
    ttlSeconds: 600,
    bind: (ctx) => ctx.mcpReq.method,
});

function buildServer() {
    const server = new McpServer({ name: 'ts-mrtr-counter', version: '1.0.0' }, { requestState: { verify: codec.verify } });
    server.registerTool(
        'increase-counter',
        {
            description: 'Increases a counter after asking by how much, then for a yes',
            inputSchema: z.object({ current: z.number().describe('Current counter value') }),
        },
        async ({ current }, ctx) => {
            const ticket = ctx.mcpReq.requestState();
            const responses = ctx.mcpReq.inputResponses;
            if (ticket === undefined) {
                return inputRequired({
                    inputRequests: {
                        amount: inputRequired.elicit({
                            mode: 'form',
                            message: 'By how much should the counter increase?',
                            requestedSchema: {
                                type: 'object',
                                properties: { amount: { type: 'number', title: 'Amount' } },
                                required: ['amount'],
                            },
                        }),
                    },
                    requestState: await codec.mint({ step: 'amount', current }, ctx),
                });
            }
            if (ticket.step === 'amount') {
                const answer = acceptedContent(responses, 'amount', AmountAnswer);
                if (answer === undefined) return text(CANCELLED);
                return inputRequired({
                    inputRequests: {
                        confirmation: inputRequired.elicit({
                            mode: 'form',
                            message: `Increase ${ticket.current} by ${answer.amount}?`,
                            requestedSchema: {
                                type: 'object',
                                properties: { confirm: { type: 'boolean', title: 'Confirm increase' } },
                                required: ['confirm'],
                            },
                        }),
                    },
                    requestState: await codec.mint({ step: 'confirm', current: ticket.current, amount: answer.amount }, ctx),
                });
            }
            const answer = acceptedContent(responses, 'confirmation', ConfirmAnswer);
            if (answer?.confirm !== true) return text(CANCELLED);
            return text(`Counter increased by ${ticket.amount}; next value is ${ticket.current + ticket.amount}`);
        },
    );
    return server;
}

const handler = createMcpHandler(buildServer, { legacy: 'reject' });

// node:http in front of the web-standard handler.
const httpServer = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
        else if (value !== undefined) headers.set(name, value);
    }
    const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: ['GET', 'HEAD'].includes(req.method) ? undefined : Buffer.concat(chunks),
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
});
httpServer.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    console.log(`ready http://127.0.0.1:${httpServer.address().port}/mcp`);
});
