//! The conformance suite's client fixture: runs the scenario named in
//! `MCP_CONFORMANCE_SCENARIO` against the URL given as the last argument.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tessera_client::{
    BoxFuture, ClientError, Elicitor, EnterpriseSignIn, HeadlessAuthorizer, InputKinds, McpClient,
    OAuthConfig, PreRegistered,
};
use tessera_protocol::{ElicitFormParams, ElicitResult, ElicitUrlParams, PrimitiveSchema};

/// Accepts every form with plausible values: defaults first, else one per type.
struct AutoAccept;

fn sample_value(field: &PrimitiveSchema) -> Value {
    match field {
        PrimitiveSchema::String(s) => json!(s.default.clone().unwrap_or_else(|| match s.format {
            Some(tessera_protocol::StringFormat::Email) => "test@example.com".into(),
            Some(tessera_protocol::StringFormat::Uri) => "https://example.com".into(),
            Some(tessera_protocol::StringFormat::Date) => "2026-07-28".into(),
            Some(tessera_protocol::StringFormat::DateTime) => "2026-07-28T00:00:00Z".into(),
            None => "test".into(),
        })),
        PrimitiveSchema::Number(n) => n
            .default
            .clone()
            .or_else(|| n.minimum.clone())
            .map_or(json!(1), Value::Number),
        PrimitiveSchema::Boolean(b) => json!(b.default.unwrap_or(true)),
        PrimitiveSchema::SingleSelect(s) => json!(
            s.default
                .clone()
                .or_else(|| s.options.pairs().first().map(|(v, _)| (*v).to_owned()))
        ),
        PrimitiveSchema::MultiSelect(m) => json!(m.default.clone().unwrap_or_else(|| {
            m.options
                .pairs()
                .first()
                .map(|(v, _)| vec![(*v).to_owned()])
                .unwrap_or_default()
        })),
    }
}

impl Elicitor for AutoAccept {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            form: true,
            url: true,
            sampling: false,
            roots: false,
        }
    }

    fn form<'a>(
        &'a self,
        _server: &'a str,
        _key: &'a str,
        params: &'a ElicitFormParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        let content: Map<String, Value> = params
            .requested_schema
            .properties
            .iter()
            .map(|(name, field)| (name.clone(), sample_value(field)))
            .collect();
        Box::pin(async move { Ok(ElicitResult::accept(content)) })
    }

    fn url<'a>(
        &'a self,
        _server: &'a str,
        _key: &'a str,
        _params: &'a ElicitUrlParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        Box::pin(async move { Ok(ElicitResult::accept(Map::new())) })
    }
}

/// Arguments for a tool from the required properties of its input schema.
fn synthesise(schema: &Map<String, Value>) -> Value {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args = Map::new();
    for name in required {
        let prop = schema.get("properties").and_then(|p| p.get(name));
        let value = match prop.and_then(|p| p.get("type")).and_then(Value::as_str) {
            Some("number" | "integer") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

async fn call_every_tool(client: &McpClient, with_arguments: bool) -> Result<(), ClientError> {
    for tool in client.list_tools().await? {
        let args = if with_arguments {
            synthesise(&tool.input_schema)
        } else {
            json!({})
        };
        match client.call_tool_raw(&tool.name, args).await {
            Ok(_) => {}
            Err(e) => eprintln!("tools/call {}: {e}", tool.name),
        }
    }
    Ok(())
}

/// How the `auth/*` scenarios sign in: headless (their authorization servers
/// redirect at once), with the suite's Client ID Metadata Document URL, and
/// pre-registered credentials when the scenario's context carries them.
fn oauth(scenario: &str, context: &Value) -> Result<OAuthConfig, ClientError> {
    let field = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_owned);
    Ok(OAuthConfig {
        redirect_uri: "http://localhost:3000/callback".into(),
        client_name: "tessera-conformance-client".into(),
        client_metadata_url: Some("https://conformance-test.local/client-metadata.json".into()),
        pre_registered: field("client_id").map(|client_id| PreRegistered {
            client_id,
            client_secret: field("client_secret"),
            issuer: field("issuer"),
            private_key: field("private_key_pem"),
        }),
        authorizer: Arc::new(HeadlessAuthorizer::new()?),
        store: None,
        // The machine sign-in scenarios: the client signs in as itself.
        client_credentials: scenario.starts_with("auth/client-credentials"),
        // Workload identity: the platform's JWT, as the scenario hands it over.
        workload_jwt: (scenario == "auth/wif-jwt-bearer")
            .then(|| field("valid_jwt"))
            .flatten(),
        // Enterprise-managed authorization: the user's ID token from the
        // scenario's identity provider, exchanged there for an ID-JAG.
        enterprise: match (
            scenario == "auth/enterprise-managed-authorization",
            field("idp_id_token"),
            field("idp_token_endpoint"),
            field("idp_client_id"),
        ) {
            (true, Some(token), Some(endpoint), Some(client)) => {
                Some(EnterpriseSignIn::id_token(token, endpoint, client))
            }
            _ => None,
        },
        dpop: true,
    })
}

async fn run(scenario: &str, url: &str, context: &Value) -> Result<(), ClientError> {
    let mut builder = McpClient::builder(url)
        .client_info("tessera-conformance-client", env!("CARGO_PKG_VERSION"))
        .elicitor(Arc::new(AutoAccept))
        .timeout(Duration::from_secs(10));
    if scenario.starts_with("auth/") {
        builder = builder.oauth(oauth(scenario, context)?);
    }
    // The suite names the revision it runs (MCP_CONFORMANCE_PROTOCOL_VERSION):
    // an initialize-era one is spoken with the handshake, as a client
    // configured for that server would.
    let revision = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    if tessera_protocol::LEGACY_PROTOCOL_VERSIONS.contains(&revision.as_str()) {
        builder = builder
            .connect_mode(tessera_client::ConnectMode::Legacy)
            .standalone_stream(true);
    }
    let client = builder.build()?;
    match scenario {
        "json-schema-ref-no-deref" => {
            client.discover().await?;
            client.list_tools().await?;
        }
        "request-metadata" | "sep-2322-client-request-state" => {
            client.discover().await?;
            call_every_tool(&client, false).await?;
        }
        "http-custom-headers" => {
            client.discover().await?;
            client.list_tools().await?;
            for call in context
                .get("toolCalls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                let args = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
                if let Err(e) = client.call_tool_raw(name, args).await {
                    eprintln!("tools/call {name}: {e}");
                }
            }
        }
        "http-standard-headers" => {
            client.discover().await?;
            call_every_tool(&client, true).await?;
            for resource in client.list_resources().await.unwrap_or_default() {
                if let Err(e) = client.read_resource(&resource.uri).await {
                    eprintln!("resources/read {}: {e}", resource.uri);
                }
            }
            for prompt in client.list_prompts().await.unwrap_or_default() {
                if let Err(e) = client.get_prompt(&prompt.name, Map::new()).await {
                    eprintln!("prompts/get {}: {e}", prompt.name);
                }
            }
        }
        // The focal tool's inputSchema, handed back whole, as the client kept it.
        "json-schema-2020-12-preservation" => {
            client.discover().await?;
            let tools = client.list_tools().await?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or_else(|| {
                    ClientError::Protocol("no json_schema_2020_12_tool listed".into())
                })?;
            let schema = Value::Object(focal.input_schema.clone());
            client
                .call_tool_raw("json_schema_echo", json!({ "schema": schema }))
                .await?;
        }
        // A host lists skills on connecting and fetches nothing else ahead of need.
        "sep-2640-client-no-prefetch" => {
            client.discover().await?;
            for skill in client.list_skills().await? {
                eprintln!("skill {} listed", skill.uri);
            }
        }
        // A host loads a skill (verified), then reads its files as they are needed.
        "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => {
            client.discover().await?;
            for entry in client.list_skills().await? {
                let skill = match client.load_skill(&entry).await {
                    Ok(skill) => skill,
                    Err(e) => {
                        eprintln!("{e}");
                        continue;
                    }
                };
                for file in skill.files().iter().skip(1) {
                    client.read_skill_file(&skill, &file.uri).await?;
                }
            }
        }
        _ => {
            client.discover().await?;
            call_every_tool(&client, true).await?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client [ARGS...] URL (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_else(|| json!({}));
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(25), run(&scenario, &url, &context)).await
    });
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("scenario {scenario}: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("scenario {scenario}: gave up after 25 s");
            ExitCode::FAILURE
        }
    }
}
