// Benchmark peer: the `increase-counter` MRTR tool on the reference
// TypeScript stack — Cloudflare Worker, `createMcpHandler` from `agents`
// (legacy: "reject"), `@modelcontextprotocol/server` 2.0.0 with its HMAC
// requestState codec — for load tests against the Tessera `counter` example.
//
// Round 1 (no requestState) asks for an amount; round 2 (amount accepted)
// asks for a confirmation; round 3 (confirm true) answers
// "Counter increased by {amount}; next value is {next}". Anything else
// answers "Counter increase cancelled.".

import {
  McpServer,
  acceptedContent,
  createRequestStateCodec,
  inputRequired,
  type RequestStateCodec
} from "@modelcontextprotocol/server";
import { createMcpHandler } from "agents/mcp";
import { z } from "zod";

interface Env {
  MRTR_REQUEST_STATE_KEY?: string;
}

/** What the signed requestState carries between rounds. */
type Ticket =
  | { step: "amount"; current: number }
  | { step: "confirm"; current: number; amount: number };

const CANCELLED = "Counter increase cancelled.";

const AmountAnswer = z.object({ amount: z.number() });
const ConfirmAnswer = z.object({ confirm: z.boolean() });

function text(message: string) {
  return { content: [{ type: "text" as const, text: message }] };
}

function buildServer(codec: RequestStateCodec<Ticket>): McpServer {
  const server = new McpServer(
    { name: "ts-worker-counter", version: "0.1.0" },
    { requestState: { verify: codec.verify } }
  );

  server.registerTool(
    "increase-counter",
    {
      description:
        "Calculate a counter increase using two stateless elicitation rounds",
      inputSchema: z.object({
        current: z.number().describe("Current counter value")
      })
    },
    async ({ current }, ctx) => {
      const ticket = ctx.mcpReq.requestState<Ticket>();
      const responses = ctx.mcpReq.inputResponses;

      // Round 1: no (verified) state yet.
      if (ticket === undefined) {
        return inputRequired({
          inputRequests: {
            amount: inputRequired.elicit({
              mode: "form",
              message: "By how much should the counter increase?",
              requestedSchema: {
                type: "object",
                properties: {
                  amount: {
                    type: "number",
                    title: "Amount",
                    description: "The amount to add to the current value"
                  }
                },
                required: ["amount"]
              }
            })
          },
          requestState: await codec.mint({ step: "amount", current }, ctx)
        });
      }

      // Round 2: the amount.
      if (ticket.step === "amount") {
        const answer = acceptedContent(responses, "amount", AmountAnswer);
        if (answer === undefined) return text(CANCELLED);
        const { amount } = answer;
        return inputRequired({
          inputRequests: {
            confirmation: inputRequired.elicit({
              mode: "form",
              message: `Increase ${ticket.current} by ${amount}?`,
              requestedSchema: {
                type: "object",
                properties: {
                  confirm: { type: "boolean", title: "Confirm increase" }
                },
                required: ["confirm"]
              }
            })
          },
          requestState: await codec.mint(
            { step: "confirm", current: ticket.current, amount },
            ctx
          )
        });
      }

      // Round 3: the confirmation.
      const answer = acceptedContent(responses, "confirmation", ConfirmAnswer);
      if (answer?.confirm !== true) return text(CANCELLED);
      return text(
        `Counter increased by ${ticket.amount}; next value is ${ticket.current + ticket.amount}`
      );
    }
  );

  return server;
}

type Handler = ReturnType<typeof makeHandler>;

function makeHandler(key: string | undefined) {
  // Throws (HTTP 500 from workerd) when the key is missing or shorter than
  // 32 bytes, like the reference Worker.
  const codec = createRequestStateCodec<Ticket>({
    key: key ?? "",
    ttlSeconds: 600,
    // Bind tickets to the method, as in the SDK's documentation.
    bind: (ctx) => ctx.mcpReq.method
  });
  return createMcpHandler(() => buildServer(codec), { legacy: "reject" });
}

type WorkerContext = Parameters<Handler>[2];

// One handler (and codec) per isolate; the factory still builds a fresh
// McpServer for every request, as createMcpHandler prescribes.
let handler: Handler | undefined;

export default {
  fetch(request: Request, env: Env, ctx: WorkerContext): Promise<Response> {
    handler ??= makeHandler(env.MRTR_REQUEST_STATE_KEY);
    return handler(request, env, ctx);
  }
};
