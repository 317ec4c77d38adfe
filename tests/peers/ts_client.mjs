// Drives the counter with the official MCP TypeScript SDK client
// (@modelcontextprotocol/client 2.x), over stdio or Streamable HTTP.
//
// usage: node ts_client.mjs MODE SCENARIO COUNTER_BINARY [ARGS...]   (stdio)
//        node ts_client.mjs MODE SCENARIO http://HOST:PORT/mcp       (HTTP)
// MODE: legacy | auto | 2026-07-28 (pinned). SCENARIO: accept | decline (at
// the first question) | cancel (at the second) | cancel-first | confirm-false.
// Prints one JSON line: the negotiated version, the forms asked, and the tool's final text.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';

const [mode, scenario, target, ...args] = process.argv.slice(2);
const versionNegotiation = { mode: mode === 'legacy' || mode === 'auto' ? mode : { pin: mode } };
const client = new Client(
    { name: 'tessera-ts-peer', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation }
);
const asked = [];
client.setRequestHandler('elicitation/create', async request => {
    const props = Object.keys(request.params.requestedSchema?.properties ?? {}).sort();
    asked.push({ message: request.params.message, fields: props });
    if (props.includes('amount')) {
        if (scenario === 'decline') return { action: 'decline' };
        if (scenario === 'cancel-first') return { action: 'cancel' };
        return { action: 'accept', content: { amount: 5 } };
    }
    if (props.includes('confirm')) {
        if (scenario === 'cancel') return { action: 'cancel' };
        return { action: 'accept', content: { confirm: scenario !== 'confirm-false' } };
    }
    return { action: 'cancel' };
});
let transport;
if (/^https?:\/\//.test(target)) {
    transport = new StreamableHTTPClientTransport(new URL(target));
} else {
    // The SDK passes the child only a safe default environment: forward the key.
    const env = { ...getDefaultEnvironment(), MRTR_REQUEST_STATE_KEY: process.env.MRTR_REQUEST_STATE_KEY ?? '' };
    transport = new StdioClientTransport({ command: target, args, env, stderr: 'inherit' });
}
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: 'increase-counter', arguments: { current: 10 } });
console.log(JSON.stringify({
    protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null,
    tools: tools.tools.map(t => t.name),
    asked,
    text: result.content[0].text,
    isError: !!result.isError,
}));
await (transport.terminateSession?.() ?? Promise.resolve()).catch(() => {});
await client.close();
