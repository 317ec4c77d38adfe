// Drives the counter over Streamable HTTP with the TypeScript SDK 1.x client
// (@modelcontextprotocol/sdk), which speaks only the initialize era.
//
// usage: node ts_sdk1_client.mjs SCENARIO http://HOST:PORT/mcp
// SCENARIO: accept | decline (at the first question) | cancel (at the second) | confirm-false.
// Prints one JSON line: the negotiated version, the forms asked, and the tool's final text.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [scenario, url] = process.argv.slice(2);
const client = new Client({ name: 'tessera-ts-sdk1-peer', version: '1.0.0' }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async request => {
    const props = Object.keys(request.params.requestedSchema?.properties ?? {}).sort();
    asked.push({ message: request.params.message, fields: props });
    if (props.includes('amount')) {
        if (scenario === 'decline') return { action: 'decline' };
        return { action: 'accept', content: { amount: 5 } };
    }
    if (props.includes('confirm')) {
        if (scenario === 'cancel') return { action: 'cancel' };
        return { action: 'accept', content: { confirm: scenario !== 'confirm-false' } };
    }
    return { action: 'cancel' };
});
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: 'increase-counter', arguments: { current: 10 } });
console.log(JSON.stringify({
    protocolVersion: transport.protocolVersion ?? null,
    sessionId: transport.sessionId ?? null,
    tools: tools.tools.map(t => t.name),
    asked,
    text: result.content[0].text,
    isError: !!result.isError,
}));
await transport.terminateSession();
await client.close();
