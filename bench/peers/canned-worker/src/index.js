// The ceiling under workerd: a Worker that parses each body once and answers
// the increase-counter rounds with canned results (bench/ceiling's answers),
// so bench/compare can say how close a real Worker comes to what the runtime
// allows. No MCP logic, no tickets checked.
const TICKET = "t1e.k1.NBoG85jGpHEnNV5VQ7vH5luCaBH0UeDF-abX93SCA3fOFDMnwUhmt77QsRibWAerDJaNh6OI4l9dEp_xc3Gdu4bQ8RxlwcC8Rkb-qsM7zgYiadBQjbdLJkfEK8nk1L3Z6gVitEQZXpacmVofr06pRbNkrKVAcidUp89v52ouRItcKUxeHfCT8rPmFqSNU5yKqQWm-Nx3iUby0IuGqjoTQeDWN05BA_N645OazuVEyhK6V09EKjtWzM-QrZzmK";
const META = { "io.modelcontextprotocol/serverInfo": { name: "canned-worker", version: "0.1.0" } };
const ANSWERS = [
  {
    resultType: "input_required",
    inputRequests: { amount: { method: "elicitation/create", params: { mode: "form", message: "By how much should the counter increase?",
      requestedSchema: { type: "object", properties: { amount: { type: "number", title: "Amount", description: "The amount to add to the current value" } }, required: ["amount"] } } } },
    requestState: TICKET, _meta: META,
  },
  {
    resultType: "input_required",
    inputRequests: { confirmation: { method: "elicitation/create", params: { mode: "form", message: "Increase 10 by 5?",
      requestedSchema: { type: "object", properties: { confirm: { type: "boolean", title: "Confirm increase" } }, required: ["confirm"] } } } },
    requestState: TICKET, _meta: META,
  },
  { resultType: "complete", content: [{ type: "text", text: "Counter increased by 5; next value is 15" }], _meta: META },
];

export default {
  async fetch(request) {
    let parsed = null;
    try { parsed = await request.json(); } catch { /* answered as round one */ }
    const responses = parsed?.params?.inputResponses;
    const round = responses?.confirmation ? 2 : responses?.amount ? 1 : 0;
    const body = JSON.stringify({ jsonrpc: "2.0", id: parsed?.id ?? null, result: ANSWERS[round] });
    return new Response(body, { headers: { "content-type": "application/json" } });
  },
};
