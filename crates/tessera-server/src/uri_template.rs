//! URI templates (RFC 6570) as resource templates use them: checked and
//! expanded by `iri-string`, matched here.
//!
//! RFC 6570 defines how a template expands; reading variables back out of a
//! URI is left to implementations, and no maintained Rust crate does it
//! (`iri-string` keeps its parse tree private). It is written here, and it
//! is a security boundary: the values it extracts are what a resource
//! handler receives. So it follows the expansion rules in reverse, strictly:
//!
//! - `{var}` (and `{.var}`, `{/var}`, `{;var}`, `{?var}`, `{&var}`) matches
//!   unreserved characters and percent-encodings only — it stops at `/`,
//!   `?`, `#` and every other reserved character, as expansion would have
//!   encoded them;
//! - `{+var}` and `{#var}` (reserved expansion) may match reserved
//!   characters, `/` included: a template that wants a path says so;
//! - values are percent-decoded; outside reserved expansion a value (or an
//!   item of an exploded list) that is `.` or `..`, or that decodes to
//!   contain `/`, does not match — so `..` never reaches a handler unless
//!   the template asked for reserved expansion;
//! - `{/segments*}` matches one or more `/`-separated segments (each checked
//!   as above), handed over joined by `/`; `{?x,y}` and `{&x}` match named
//!   pairs, any of them absent; `{var:3}` matches at most three characters.
//!
//! ```text
//! test://template/{id}/data   test://template/42/data    id = 42
//!                             test://template/a/b/data   no match
//!                             test://template/../data    no match
//! file:///{+path}             file:///a/b.txt            path = a/b.txt
//! repo://{owner}{/path*}      repo://ada/src/main.rs     owner = ada, path = src/main.rs
//! search://{q}{?page,size}    search://rust?size=10      q = rust, size = 10
//! ```

use iri_string::template::UriTemplateStr;

use crate::TemplateVariables;

/// The most work one match may do, in bytes looked at (a template with
/// several expressions against a long URI backtracks; past this, it does not
/// match). A URI of the longest length costs about a quarter of it for one
/// `{var}`.
const MAX_WORK: usize = 4_000_000;

/// The longest URI matched against a template (longer ones match none).
pub(crate) const MAX_URI_BYTES: usize = 8 * 1024;

/// A resource template, parsed for matching.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    Expression { op: Op, vars: Vec<VarSpec> },
}

#[derive(Debug, Clone, PartialEq)]
struct VarSpec {
    name: String,
    explode: bool,
    prefix: Option<usize>,
}

/// An expression's operator (RFC 6570 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `{var}`
    Simple,
    /// `{+var}`
    Reserved,
    /// `{#var}`
    Fragment,
    /// `{.var}`
    Label,
    /// `{/var}`
    Path,
    /// `{;var}`
    PathParam,
    /// `{?var}`
    Query,
    /// `{&var}`
    QueryContinuation,
}

impl Op {
    fn of(first: u8) -> Option<Self> {
        Some(match first {
            b'+' => Self::Reserved,
            b'#' => Self::Fragment,
            b'.' => Self::Label,
            b'/' => Self::Path,
            b';' => Self::PathParam,
            b'?' => Self::Query,
            b'&' => Self::QueryContinuation,
            _ => return None,
        })
    }

    /// What the expansion starts with, when any variable is defined.
    fn first(self) -> &'static str {
        match self {
            Self::Simple | Self::Reserved => "",
            Self::Fragment => "#",
            Self::Label => ".",
            Self::Path => "/",
            Self::PathParam => ";",
            Self::Query => "?",
            Self::QueryContinuation => "&",
        }
    }

    /// What separates its values.
    fn separator(self) -> char {
        match self {
            Self::Simple | Self::Reserved | Self::Fragment => ',',
            Self::Label => '.',
            Self::Path => '/',
            Self::PathParam => ';',
            Self::Query | Self::QueryContinuation => '&',
        }
    }

    /// Values written as `name=value`.
    fn named(self) -> bool {
        matches!(
            self,
            Self::PathParam | Self::Query | Self::QueryContinuation
        )
    }

    /// Reserved characters pass as they are (`+`, `#`).
    fn reserved(self) -> bool {
        matches!(self, Self::Reserved | Self::Fragment)
    }
}

/// Why a template is not one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("not an RFC 6570 URI template: {0}")]
pub(crate) struct TemplateError(String);

impl UriTemplate {
    /// Parses `template`, checked by `iri-string` first.
    pub(crate) fn parse(template: &str) -> Result<Self, TemplateError> {
        // iri-string 0.7.14 panics on a `%` followed by a multi-byte
        // character (found by the `uri_template` fuzz target); a gateway
        // registers its upstreams' templates, so that is checked here first.
        if let Some(at) = malformed_percent(template) {
            return Err(TemplateError(format!(
                "the `%` at byte {at} does not start a percent-encoding (two hex digits)"
            )));
        }
        UriTemplateStr::new(template).map_err(|e| TemplateError(e.to_string()))?;
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    break;
                }
                Some(open) => {
                    if open > 0 {
                        parts.push(Part::Literal(rest[..open].to_owned()));
                    }
                    let close = rest[open..]
                        .find('}')
                        .ok_or_else(|| TemplateError("an expression is not closed".into()))?
                        + open;
                    parts.push(expression(&rest[open + 1..close])?);
                    rest = &rest[close + 1..];
                }
            }
        }
        Ok(Self { parts })
    }

    /// The names of its variables, in order (repeated ones once).
    pub(crate) fn variables(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for part in &self.parts {
            if let Part::Expression { vars, .. } = part {
                for var in vars {
                    if !names.contains(&var.name.as_str()) {
                        names.push(&var.name);
                    }
                }
            }
        }
        names
    }

    /// The variables `uri` gives the template, when it matches it.
    pub(crate) fn matches(&self, uri: &str) -> Option<TemplateVariables> {
        // Checked whole once: every value is a part of a well-formed URI.
        if uri.len() > MAX_URI_BYTES || percent_decode(uri).is_none() {
            return None;
        }
        let mut vars = TemplateVariables::new();
        let mut work = 0;
        match_parts(&self.parts, uri, &mut vars, &mut work).then_some(vars)
    }
}

/// Where `text` has a `%` not followed by two hex digits.
fn malformed_percent(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().find_map(|(i, &b)| {
        let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
        (b == b'%' && !(hex(i + 1) && hex(i + 2))).then_some(i)
    })
}

/// One expression's body (`+path`, `x,y`, `/segments*`, `q:3`).
fn expression(body: &str) -> Result<Part, TemplateError> {
    let (op, list) = match body.bytes().next().and_then(Op::of) {
        Some(op) => (op, &body[1..]),
        None => (Op::Simple, body),
    };
    let vars = list
        .split(',')
        .map(|spec| {
            let (name, explode, prefix) = if let Some(name) = spec.strip_suffix('*') {
                (name, true, None)
            } else if let Some((name, n)) = spec.split_once(':') {
                let n = n
                    .parse()
                    .map_err(|_| TemplateError(format!("prefix {n:?} is not a length")))?;
                (name, false, Some(n))
            } else {
                (spec, false, None)
            };
            Ok(VarSpec {
                name: name.to_owned(),
                explode,
                prefix,
            })
        })
        .collect::<Result<_, TemplateError>>()?;
    Ok(Part::Expression { op, vars })
}

fn match_parts(parts: &[Part], uri: &str, vars: &mut TemplateVariables, work: &mut usize) -> bool {
    *work += 1;
    if *work > MAX_WORK {
        return false;
    }
    let Some((part, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match part {
        Part::Literal(literal) => uri
            .strip_prefix(literal.as_str())
            .is_some_and(|after| match_parts(rest, after, vars, work)),
        Part::Expression { op, vars: specs } => {
            // The longest span first: a value takes what it can, and gives back
            // to what follows only as far as it must.
            let longest = allowed_span(*op, uri);
            for end in (0..=longest).rev() {
                // Every candidate counts, matched or not: reading it costs its length.
                *work += end + 1;
                if *work > MAX_WORK {
                    return false;
                }
                if !uri.is_char_boundary(end) {
                    continue;
                }
                let Some(found) = read_expression(*op, specs, &uri[..end]) else {
                    continue;
                };
                let before = vars.clone();
                vars.extend(found);
                if match_parts(rest, &uri[end..], vars, work) {
                    return true;
                }
                *vars = before;
            }
            false
        }
    }
}

/// How far an expression of `op` may reach into `uri`: up to the first
/// character its expansion could not have written.
fn allowed_span(op: Op, uri: &str) -> usize {
    let first = op.first();
    let mut start = 0;
    if !first.is_empty() && uri.starts_with(first) {
        start = first.len();
    }
    let body = &uri[start..];
    let stop = body
        .char_indices()
        .find(|&(_, c)| !written_by(op, c))
        .map_or(body.len(), |(i, _)| i);
    start + stop
}

/// Whether an expansion of `op` may contain `c` (its separators and `=`
/// included).
fn written_by(op: Op, c: char) -> bool {
    let unreserved = c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~') || c == '%';
    if op.reserved() {
        return unreserved || is_reserved(c);
    }
    unreserved || c == op.separator() || (op.named() && c == '=') || c == ','
}

/// RFC 3986's reserved characters.
fn is_reserved(c: char) -> bool {
    matches!(
        c,
        ':' | '/'
            | '?'
            | '#'
            | '['
            | ']'
            | '@'
            | '!'
            | '$'
            | '&'
            | '\''
            | '('
            | ')'
            | '*'
            | '+'
            | ','
            | ';'
            | '='
    )
}

/// Reads `text` as an expansion of the expression `specs` with `op`: the
/// variables it defines, or `None` when it is not one.
fn read_expression(op: Op, specs: &[VarSpec], text: &str) -> Option<TemplateVariables> {
    let mut found = TemplateVariables::new();
    if text.is_empty() {
        // Every variable undefined: allowed where a value may be absent (named pairs).
        return op.named().then_some(found);
    }
    let body = text.strip_prefix(op.first())?;
    if op.named() {
        for pair in body.split(op.separator()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let spec = specs.iter().find(|s| s.name == name)?;
            if found.contains_key(name) && !spec.explode {
                return None;
            }
            let value = checked(op, spec, value)?;
            match found.get_mut(name) {
                Some(list) => {
                    list.push(',');
                    list.push_str(&value);
                }
                None => {
                    found.insert(name.to_owned(), value);
                }
            }
        }
        return Some(found);
    }
    let items: Vec<&str> = body.split(op.separator()).collect();
    let mut items = items.as_slice();
    for (i, spec) in specs.iter().enumerate() {
        let last = i + 1 == specs.len();
        let take = if spec.explode && last { items.len() } else { 1 };
        if items.len() < take || take == 0 {
            return None;
        }
        let (mine, rest) = items.split_at(take);
        let values = mine
            .iter()
            .map(|item| checked(op, spec, item))
            .collect::<Option<Vec<String>>>()?;
        if values.iter().any(String::is_empty) {
            return None;
        }
        found.insert(spec.name.clone(), values.join(&op.separator().to_string()));
        items = rest;
    }
    items.is_empty().then_some(found)
}

/// One value as the handler gets it: percent-decoded, within its prefix
/// length, and — outside reserved expansion — neither `.`, `..` nor a value
/// that decodes to contain `/`, `\` or a control character (a path on
/// another system, a truncated string).
fn checked(op: Op, spec: &VarSpec, raw: &str) -> Option<String> {
    let value = percent_decode(raw)?;
    if let Some(n) = spec.prefix
        && value.chars().count() > n
    {
        return None;
    }
    let unsafe_char = |c: char| c == '/' || c == '\\' || c.is_control();
    if !op.reserved() && (value == "." || value == ".." || value.contains(unsafe_char)) {
        return None;
    }
    Some(value)
}

/// `%XX` sequences decoded (by `percent-encoding`); `None` when one is
/// malformed or the result is not UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    if malformed_percent(raw).is_some() {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .ok()?;
    Some(decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use iri_string::spec::UriSpec;
    use iri_string::template::simple_context::SimpleContext;

    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> TemplateVariables {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn matched(template: &str, uri: &str) -> Option<TemplateVariables> {
        UriTemplate::parse(template).unwrap().matches(uri)
    }

    /// The table the issue asks for: templates and URIs, what each gives,
    /// and the traversal cases refused.
    #[test]
    fn templates_and_uris() {
        /// A template, a URI, and the variables it gives (`None`: no match).
        type Case<'a> = (&'a str, &'a str, Option<&'a [(&'a str, &'a str)]>);
        let cases: &[Case<'_>] = &[
            (
                "test://template/{id}/data",
                "test://template/42/data",
                Some(&[("id", "42")]),
            ),
            (
                "test://template/{id}/data",
                "test://template/a/b/data",
                None,
            ),
            ("test://template/{id}/data", "test://template/../data", None),
            ("test://template/{id}/data", "test://template/./data", None),
            (
                "test://template/{id}/data",
                "test://template/%2e%2e/data",
                None,
            ),
            (
                "test://template/{id}/data",
                "test://template/a%2Fb/data",
                None,
            ),
            ("test://template/{id}/data", "test://template//data", None),
            (
                "test://template/{id}/data",
                "test://template/42/other",
                None,
            ),
            (
                "test://template/{id}/data",
                "test://template/x%20y/data",
                Some(&[("id", "x y")]),
            ),
            ("file:///{path}", "file:///a/b.txt", None),
            (
                "file:///{+path}",
                "file:///a/b.txt",
                Some(&[("path", "a/b.txt")]),
            ),
            (
                "file:///{+path}",
                "file:///../etc/passwd",
                Some(&[("path", "../etc/passwd")]),
            ),
            ("x://{a}-{b}", "x://1-2", Some(&[("a", "1"), ("b", "2")])),
            ("x://{a}/{b}", "x://1/2", Some(&[("a", "1"), ("b", "2")])),
            ("x://{a,b}", "x://1,2", Some(&[("a", "1"), ("b", "2")])),
            (
                "repo://{owner}{/path*}",
                "repo://ada/src/main.rs",
                Some(&[("owner", "ada"), ("path", "src/main.rs")]),
            ),
            ("repo://{owner}{/path*}", "repo://ada/src/../main.rs", None),
            (
                "repo://{owner}{/name}",
                "repo://ada/tessera",
                Some(&[("owner", "ada"), ("name", "tessera")]),
            ),
            (
                "search://{q}{?page,size}",
                "search://rust?size=10",
                Some(&[("q", "rust"), ("size", "10")]),
            ),
            (
                "search://{q}{?page,size}",
                "search://rust?page=2&size=10",
                Some(&[("q", "rust"), ("page", "2"), ("size", "10")]),
            ),
            (
                "search://{q}{?page,size}",
                "search://rust",
                Some(&[("q", "rust")]),
            ),
            ("search://{q}{?page,size}", "search://rust?other=1", None),
            ("x://{var:3}", "x://val", Some(&[("var", "val")])),
            ("x://{var:3}", "x://value", None),
            (
                "x://doc{#section}",
                "x://doc#intro/more",
                Some(&[("section", "intro/more")]),
            ),
            ("x://host{.ext}", "x://host.json", Some(&[("ext", "json")])),
            ("test://static", "test://static", Some(&[])),
            ("test://static", "test://static2", None),
        ];
        for (template, uri, want) in cases {
            let got = matched(template, uri);
            let want = want.map(vars);
            assert_eq!(got, want, "{template} against {uri}");
        }
    }

    /// RFC 6570's own examples (§3.2), expanded by `iri-string` and matched
    /// back: the string values come back as they went in.
    #[test]
    fn expansions_of_the_rfcs_examples_match_back() {
        let mut context = SimpleContext::new();
        for (name, value) in [
            ("var", "value"),
            ("hello", "Hello World!"),
            ("path", "/foo/bar"),
            ("x", "1024"),
            ("y", "768"),
            ("who", "fred"),
            ("base", "http://example.com/home/"),
            ("half", "50%"),
        ] {
            context.insert(name, value);
        }
        let examples: &[(&str, &[&str])] = &[
            ("x://{var}", &["var"]),
            ("x://{hello}", &["hello"]),
            ("x://{half}", &["half"]),
            ("x://{x,y}", &["x", "y"]),
            ("x://{+var}", &["var"]),
            ("x://{+hello}", &["hello"]),
            ("x://{+path}/here", &["path"]),
            ("x://here?ref={+path}", &["path"]),
            ("x://{#var}", &["var"]),
            ("x://{#hello}", &["hello"]),
            ("x://X{.var}", &["var"]),
            ("x://X{.x,y}", &["x", "y"]),
            ("x://{/var}", &["var"]),
            ("x://{/var,x}/here", &["var", "x"]),
            ("x://{;x,y}", &["x", "y"]),
            ("x://{?x,y}", &["x", "y"]),
            ("x://?fixed=yes{&x}", &["x"]),
            ("x://{var:3}", &["var"]),
        ];
        for (template, names) in examples {
            let expanded = UriTemplateStr::new(template)
                .unwrap()
                .expand::<UriSpec, _>(&context)
                .unwrap()
                .to_string();
            let got = matched(template, &expanded)
                .unwrap_or_else(|| panic!("{template} does not match its expansion {expanded}"));
            for name in *names {
                let sent =
                    match context.get(iri_string::template::context::VarName::new(name).unwrap()) {
                        Some(iri_string::template::simple_context::Value::String(s)) => s.clone(),
                        _ => unreachable!(),
                    };
                let sent = if *template == "x://{var:3}" {
                    sent[..3].to_owned()
                } else {
                    sent
                };
                assert_eq!(got.get(*name), Some(&sent), "{template} -> {expanded}");
            }
        }
    }

    /// A URI built to make the matcher backtrack costs a bounded amount of
    /// work: a megabyte-long URI is refused by its length, and the longest
    /// allowed one against a template of several expressions ends.
    #[test]
    fn hostile_uris_cost_bounded_work() {
        let template = UriTemplate::parse("x://{a}{b}{c}{d:3}/end").unwrap();
        let huge = format!("x://%FF{}", "a".repeat(1 << 20));
        assert!(template.matches(&huge).is_none());
        let long = format!("x://{}", "a".repeat(MAX_URI_BYTES - 4));
        let started = std::time::Instant::now();
        assert!(template.matches(&long).is_none());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let reserved = UriTemplate::parse("x://{+a}/{+b}/{+c}/end").unwrap();
        let slashes = format!("x://{}", "a/".repeat((MAX_URI_BYTES - 4) / 2));
        assert!(reserved.matches(&slashes).is_none());
    }

    #[test]
    fn what_is_not_a_template_is_refused_and_variables_are_listed() {
        assert!(UriTemplate::parse("x://{unclosed").is_err());
        // The fuzz target's find: a `%` before a multi-byte character.
        assert!(UriTemplate::parse("x://%a\u{21a}/{id}").is_err());
        assert!(UriTemplate::parse("x://%zz/{id}").is_err());
        assert!(UriTemplate::parse("x://%41/{id}").is_ok());
        assert!(UriTemplate::parse("x://{a b}").is_err());
        let t = UriTemplate::parse("repo://{owner}{/path*}{?ref,owner}").unwrap();
        assert_eq!(t.variables(), ["owner", "path", "ref"]);
    }
}
