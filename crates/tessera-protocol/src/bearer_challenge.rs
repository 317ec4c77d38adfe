//! `WWW-Authenticate: Bearer …` as a resource server sends it (RFC 6750 §3, RFC 9728 §5.1).

/// The parameters of a Bearer challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `resource_metadata`: where the protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the resource needs, space-separated.
    pub scope: Option<String>,
    /// `error`, e.g. `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
}

impl BearerChallenge {
    /// Reads the Bearer challenge of a `WWW-Authenticate` value (parameters in any order,
    /// quoted or bare); `None` when it has no Bearer challenge.
    pub fn parse(header: &str) -> Option<Self> {
        Self::parse_scheme(header, "Bearer")
    }

    /// Reads the challenge of `scheme` (e.g. `DPoP`, RFC 9449 §7.1, whose
    /// parameters are a Bearer challenge's) in a `WWW-Authenticate` value
    /// that may hold several; `None` when it has none.
    pub fn parse_scheme(header: &str, scheme: &str) -> Option<Self> {
        // The scheme starts the header or follows a comma (several challenges),
        // and is a whole word: `Basic realm="bearer"` has no Bearer challenge.
        let bytes = header.as_bytes();
        let len = scheme.len();
        let start = (0..(bytes.len() + 1).saturating_sub(len))
            .filter(|&i| bytes[i..i + len].eq_ignore_ascii_case(scheme.as_bytes()))
            .filter(|&i| {
                let before = header.get(..i).unwrap_or("").trim_end();
                before.is_empty() || before.ends_with(',')
            })
            .find(|&i| {
                bytes
                    .get(i + len)
                    .is_none_or(|b| b.is_ascii_whitespace() || *b == b',')
            })
            .map(|i| i + len)?;
        let mut out = Self::default();
        let mut rest = header[start..].trim_start();
        while !rest.is_empty() {
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq]
                .trim()
                .trim_start_matches(',')
                .trim()
                .to_ascii_lowercase();
            // `Scheme param=`: the next challenge begins; its parameters are not ours.
            if name.contains(char::is_whitespace) {
                break;
            }
            rest = rest[eq + 1..].trim_start();
            let value;
            if let Some(quoted) = rest.strip_prefix('"') {
                let mut v = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, n)) = chars.next() {
                                v.push(n);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => v.push(c),
                    }
                }
                value = v;
                rest = &quoted[end.min(quoted.len())..];
            } else {
                let end = rest.find(',').unwrap_or(rest.len());
                value = rest[..end].trim().to_owned();
                rest = &rest[end..];
            }
            rest = rest.trim_start().trim_start_matches(',').trim_start();
            match name.as_str() {
                "resource_metadata" => out.resource_metadata = Some(value),
                "scope" => out.scope = Some(value),
                "error" => out.error = Some(value),
                _ => {}
            }
        }
        Some(out)
    }

    /// The challenged scopes, one by one.
    pub fn scopes(&self) -> Vec<String> {
        self.scope
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_in_any_order_quoted_or_not() {
        let c = BearerChallenge::parse(
            r#"Bearer error="invalid_token", error_description="Missing Authorization header", scope="mcp:basic", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp""#,
        )
        .unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope.as_deref(), Some("mcp:basic"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );
        let c = BearerChallenge::parse(
            r#"Bearer scope="mcp:write", resource_metadata="x", error=insufficient_scope"#,
        )
        .unwrap();
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scopes(), vec!["mcp:write"]);
        assert_eq!(
            BearerChallenge::parse("Bearer").unwrap(),
            BearerChallenge::default()
        );
        assert!(BearerChallenge::parse("Basic realm=x").is_none());
        assert!(BearerChallenge::parse(r#"Basic realm="bearer""#).is_none());
        assert!(BearerChallenge::parse("Bearerish x=1").is_none());
        let c = BearerChallenge::parse(r#"Basic realm="x", Bearer scope="s""#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("s"));
        let c = BearerChallenge::parse(r#"Bearer scope="a \"b\" c""#).unwrap();
        assert_eq!(c.scope.as_deref(), Some(r#"a "b" c"#));
    }

    /// RFC 9449 §7.1: a resource taking both schemes challenges with both;
    /// each challenge's parameters stay its own.
    #[test]
    fn several_challenges_keep_their_own_parameters() {
        let header = r#"Bearer resource_metadata="https://r/m", DPoP algs="ES256 PS256", error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof""#;
        let bearer = BearerChallenge::parse(header).unwrap();
        assert_eq!(bearer.error, None);
        assert_eq!(bearer.resource_metadata.as_deref(), Some("https://r/m"));
        let dpop = BearerChallenge::parse_scheme(header, "DPoP").unwrap();
        assert_eq!(dpop.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(dpop.resource_metadata, None);
        let alone = BearerChallenge::parse_scheme(r#"DPoP resource_metadata="x""#, "dpop").unwrap();
        assert_eq!(alone.resource_metadata.as_deref(), Some("x"));
        assert!(BearerChallenge::parse_scheme("DPoPx a=1", "DPoP").is_none());
        assert!(BearerChallenge::parse_scheme("Bearer", "DPoP").is_none());
        assert_eq!(
            BearerChallenge::parse_scheme("DPoP", "DPoP"),
            Some(BearerChallenge::default())
        );
    }
}
