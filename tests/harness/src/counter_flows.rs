//! The counter checks every deployment of `increase-counter` passes (the
//! Worker under workerd, the Lambda under `cargo lambda watch`): three
//! rounds, decline, cancel, `confirm: false`, a tampered ticket, a ticket
//! presented with other arguments.

use serde_json::{Value, json};

use crate::{McpReply, mcp_post};

/// Calls to one counter endpoint, numbering their JSON-RPC ids.
pub struct CounterCalls<'a> {
    http: &'a reqwest::Client,
    url: &'a str,
    token: Option<&'a str>,
    id: i64,
}

impl<'a> CounterCalls<'a> {
    /// Calls to `url`, with a bearer `token` when given.
    pub fn new(http: &'a reqwest::Client, url: &'a str, token: Option<&'a str>) -> Self {
        Self {
            http,
            url,
            token,
            id: 0,
        }
    }

    /// Posts `increase-counter` with `current`, a ticket and answers.
    pub async fn call(
        &mut self,
        current: f64,
        state: Option<&str>,
        responses: Option<Value>,
    ) -> McpReply {
        self.id += 1;
        let mut params = json!({"name": "increase-counter", "arguments": {"current": current}});
        if let Some(s) = state {
            params["requestState"] = json!(s);
        }
        if let Some(r) = responses {
            params["inputResponses"] = r;
        }
        mcp_post(
            self.http,
            self.url,
            self.token,
            self.id,
            "tools/call",
            params,
        )
        .await
    }

    /// A new flow taken to its confirmation question; its ticket.
    pub async fn round_two(&mut self) -> String {
        let s1 = state(&self.call(10.0, None, None).await);
        let amount = json!({"amount": accept(json!({"amount": 5}))});
        state(&self.call(10.0, Some(&s1), Some(amount)).await)
    }

    /// The counter checks, each on a fresh ticket: 10 + 5 → 15 in three
    /// rounds; decline at the first form, cancel at the confirmation and
    /// `confirm: false` all end "Counter increase cancelled."; a tampered
    /// ticket and a ticket with other arguments are refused with -32602.
    pub async fn check_flows(&mut self) {
        let r1 = self.call(10.0, None, None).await;
        assert_eq!(r1.status, 200, "{}", r1.body);
        assert_eq!(r1.body["result"]["resultType"], "input_required");
        assert!(r1.body["result"]["inputRequests"]["amount"].is_object());
        let s1 = state(&r1);
        let amount = json!({"amount": accept(json!({"amount": 5}))});
        let r2 = self.call(10.0, Some(&s1), Some(amount)).await;
        assert_eq!(
            r2.body["result"]["inputRequests"]["confirmation"]["params"]["message"],
            "Increase 10 by 5?"
        );
        let r3 = self.call(10.0, Some(&state(&r2)), Some(confirmed())).await;
        assert_eq!(text(&r3), "Counter increased by 5; next value is 15");

        let s1 = state(&self.call(10.0, None, None).await);
        let declined = json!({"amount": {"action": "decline"}});
        let r = self.call(10.0, Some(&s1), Some(declined)).await;
        assert_eq!(text(&r), "Counter increase cancelled.");
        let s2 = self.round_two().await;
        let cancelled = json!({"confirmation": {"action": "cancel"}});
        let r = self.call(10.0, Some(&s2), Some(cancelled)).await;
        assert_eq!(text(&r), "Counter increase cancelled.");
        let s2 = self.round_two().await;
        let refused = json!({"confirmation": accept(json!({"confirm": false}))});
        let r = self.call(10.0, Some(&s2), Some(refused)).await;
        assert_eq!(text(&r), "Counter increase cancelled.");

        let s2 = self.round_two().await;
        let mut t = s2.clone().into_bytes();
        let i = t.len() - 5;
        t[i] = if t[i] == b'x' { b'y' } else { b'x' };
        let tampered = String::from_utf8(t).expect("a ticket is ASCII");
        let r = self.call(10.0, Some(&tampered), Some(confirmed())).await;
        assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
        assert_eq!(
            r.body["error"]["message"],
            "Invalid or expired requestState"
        );
        let r = self.call(999.0, Some(&s2), Some(confirmed())).await;
        assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
    }
}

impl CounterCalls<'_> {
    /// With single-use tickets: a flow completed, then its final round
    /// replayed is refused (-32602, the same message as a forgery).
    pub async fn check_replay_refused(&mut self) {
        let s2 = self.round_two().await;
        let done = self.call(10.0, Some(&s2), Some(confirmed())).await;
        assert_eq!(text(&done), "Counter increased by 5; next value is 15");
        let replay = self.call(10.0, Some(&s2), Some(confirmed())).await;
        assert_eq!(replay.body["error"]["code"], -32602, "{}", replay.body);
        assert_eq!(
            replay.body["error"]["message"],
            "Invalid or expired requestState"
        );
    }

    /// What a serverless deployment refuses: GET (no stream to open) with
    /// 405, and an initialize-era request (no `MCP_LEGACY`) with 400 and
    /// -32022 naming the versions served.
    pub async fn check_serverless_refusals(&self) {
        let r = self
            .http
            .get(self.url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .expect("the server answers");
        assert_eq!(r.status().as_u16(), 405);
        let r = self
            .http
            .post(self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "old", "version": "1"}}})
                .to_string(),
            )
            .send()
            .await
            .expect("the server answers");
        assert_eq!(r.status().as_u16(), 400);
        let body: Value = r.json().await.unwrap_or(Value::Null);
        assert_eq!(body["error"]["code"], -32022, "{body}");
    }
}

/// An `accept` answer with `content`.
pub fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The confirmation accepted.
pub fn confirmed() -> Value {
    json!({"confirmation": accept(json!({"confirm": true}))})
}

/// The reply's `requestState`.
pub fn state(r: &McpReply) -> String {
    r.body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {}", r.body))
        .to_owned()
}

/// The reply's first text content.
pub fn text(r: &McpReply) -> String {
    r.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {}", r.body))
        .to_owned()
}
