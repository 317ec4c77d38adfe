//! Which server a command talks to: an HTTP endpoint, or a local command over stdio.

use tessera_client::{McpClient, McpClientBuilder};

/// A server as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// `http://…/mcp`.
    Url(String),
    /// `--stdio "program arg…"`: started by `tessera`, spoken to over stdin/stdout.
    Command { program: String, args: Vec<String> },
}

impl Server {
    /// Reads `--stdio COMMAND` or the first positional (the URL); returns the rest.
    pub fn from_args(
        stdio: Option<&str>,
        mut positional: Vec<String>,
    ) -> Result<(Self, Vec<String>), String> {
        if let Some(command) = stdio {
            let mut words = split_command(command)?.into_iter();
            let program = words
                .next()
                .ok_or("--stdio needs a command, e.g. --stdio \"counter --stdio\"")?;
            return Ok((
                Self::Command {
                    program,
                    args: words.collect(),
                },
                positional,
            ));
        }
        if positional.is_empty() {
            return Err(
                "name the server: an MCP endpoint URL, or --stdio \"COMMAND\" for a local server"
                    .into(),
            );
        }
        let url = positional.remove(0);
        Ok((Self::Url(url), positional))
    }

    /// A client builder for this server; run inside a trace (`TRACEPARENT`
    /// and `TRACESTATE` in the environment, the OpenTelemetry convention for
    /// a child process), every request carries that trace context.
    pub fn client(&self) -> McpClientBuilder {
        let builder = match self {
            Self::Url(url) => McpClient::builder(url),
            Self::Command { program, args } => McpClient::stdio(program, args.iter().cloned()),
        };
        let builder = builder.client_info("tessera-cli", env!("CARGO_PKG_VERSION"));
        match tessera_protocol::TraceContext::from_env() {
            Some(context) => builder.trace_context(context),
            None => builder,
        }
    }
}

/// Splits a command line into words as a POSIX shell would for plain words,
/// single and double quotes and backslash escapes (no expansions).
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed ' in {line:?}")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err(format!("unclosed \" in {line:?}")),
                        },
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed \" in {line:?}")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err(format!("a trailing \\ in {line:?}")),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell_without_expansions() {
        assert_eq!(
            split_command(r#"counter --stdio  --ttl 60"#).unwrap(),
            ["counter", "--stdio", "--ttl", "60"]
        );
        assert_eq!(
            split_command(r#"'/opt/my server/bin' "a b" c\ d "q\"x" ''"#).unwrap(),
            ["/opt/my server/bin", "a b", "c d", "q\"x", ""]
        );
        assert!(split_command("'open").is_err());
        assert!(split_command("\"open").is_err());
        assert!(split_command("x \\").is_err());
    }

    #[test]
    fn a_url_or_a_command() {
        let (s, rest) = Server::from_args(None, vec!["http://h/mcp".into(), "t".into()]).unwrap();
        assert_eq!(
            (s, rest),
            (Server::Url("http://h/mcp".into()), vec!["t".into()])
        );
        let (s, rest) = Server::from_args(Some("counter --stdio"), vec!["t".into()]).unwrap();
        assert_eq!(
            s,
            Server::Command {
                program: "counter".into(),
                args: vec!["--stdio".into()]
            }
        );
        assert_eq!(rest, vec!["t".to_owned()]);
        assert!(Server::from_args(None, vec![]).is_err());
        assert!(Server::from_args(Some("  "), vec![]).is_err());
    }
}
