//! Checking a JSON value against a JSON Schema (2020-12, and draft-07's
//! spellings): what a tool's `structuredContent` must satisfy against its
//! declared `outputSchema`, on the server before it is sent and on the client
//! when it arrives.
//!
//! Every assertion keyword of the 2020-12 validation and applicator
//! vocabularies is checked; annotations (`title`, `format`, `default`, ...)
//! and unknown keywords are ignored, as the specification says. A schema that
//! needs what this checker cannot do (`$dynamicRef`, `unevaluated*`, a `$ref`
//! outside the document, a pattern the regex engine does not take) is refused
//! when the check is built, never accepted and then skipped.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::{Map, Value};

use crate::JsonObject;

/// Keywords that need evaluation this checker does not do.
const UNSUPPORTED: &[&str] = &[
    "$dynamicRef",
    "$recursiveRef",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// How deep schemas may nest (through `$ref` too) before the check gives up.
const MAX_DEPTH: usize = 128;

/// How many (sub)schemas one check may visit before it gives up.
const MAX_STEPS: usize = 200_000;

/// A compiled JSON Schema: [`SchemaCheck::check`] says whether a value satisfies it.
///
/// ```
/// use tessera_protocol::SchemaCheck;
///
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": { "total": { "type": "number" } },
///     "required": ["total"]
/// });
/// let check = SchemaCheck::new(schema.as_object().unwrap()).unwrap();
/// assert!(check.check(&serde_json::json!({ "total": 3 })).is_ok());
/// let problem = check.check(&serde_json::json!({ "total": "3" })).unwrap_err();
/// assert_eq!(problem.to_string(), "/total: expected number, got string \"3\"");
/// ```
#[derive(Debug, Clone)]
pub struct SchemaCheck {
    root: Value,
    patterns: HashMap<String, regex::Regex>,
}

/// Why a schema cannot be checked (found when the check is built).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("schema at {at}: {problem}")]
pub struct UnusableSchema {
    /// Where in the schema (a JSON Pointer; empty for the root).
    pub at: String,
    /// What is wrong with it.
    pub problem: String,
}

/// Where a value fails its schema, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaMismatch {
    /// The failing part of the value, as a JSON Pointer (`""` is the whole value).
    pub path: String,
    /// What the schema wanted there.
    pub problem: String,
}

impl fmt::Display for SchemaMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(the whole value)"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.problem)
    }
}

impl std::error::Error for SchemaMismatch {}

impl SchemaCheck {
    /// Compiles `schema`; refuses one whose assertions could not all be checked.
    pub fn new(schema: &JsonObject) -> Result<Self, UnusableSchema> {
        let root = Value::Object(schema.clone());
        let mut patterns = HashMap::new();
        prepare(&root, &root, "", &mut patterns, &mut HashSet::new())?;
        Ok(Self { root, patterns })
    }

    /// The schema this check was built from.
    pub fn schema(&self) -> &Value {
        &self.root
    }

    /// `Ok` when `value` satisfies the schema; otherwise the first failing place.
    pub fn check(&self, value: &Value) -> Result<(), SchemaMismatch> {
        let mut path = Vec::new();
        let walk = Walk {
            check: self,
            steps: Cell::new(0),
        };
        walk.at(&self.root, value, &mut path, 0)
            .map_err(|problem| SchemaMismatch {
                path: problem.path,
                problem: problem.message,
            })
    }

    /// A tool result against this check of its `outputSchema`: a result that
    /// is not an error (`is_error`) must carry `structuredContent` satisfying
    /// it. The problem reads "it has no structuredContent" or
    /// "structuredContent at /path: ...". Server and client share the rule.
    pub fn check_tool_result(
        &self,
        is_error: bool,
        structured_content: Option<&Value>,
    ) -> Result<(), String> {
        match structured_content {
            _ if is_error => Ok(()),
            None => Err("it has no structuredContent".to_owned()),
            Some(content) => self
                .check(content)
                .map_err(|mismatch| format!("structuredContent at {mismatch}")),
        }
    }

    /// Whether `s` matches `pattern` (compiled when the check was built, or now
    /// for a pattern only a `$ref` into an unknown keyword reaches).
    fn matches(&self, pattern: &str, s: &str) -> Result<bool, String> {
        match self.patterns.get(pattern) {
            Some(regex) => Ok(regex.is_match(s)),
            None => regex::Regex::new(pattern)
                .map(|regex| regex.is_match(s))
                .map_err(|e| format!("the pattern {pattern:?} cannot be checked: {e}")),
        }
    }
}

/// One check of one value: the schema, and the steps taken so far.
struct Walk<'a> {
    check: &'a SchemaCheck,
    steps: Cell<usize>,
}

impl std::ops::Deref for Walk<'_> {
    type Target = SchemaCheck;

    fn deref(&self) -> &SchemaCheck {
        self.check
    }
}

impl Walk<'_> {
    fn at(
        &self,
        schema: &Value,
        value: &Value,
        path: &mut Vec<String>,
        depth: usize,
    ) -> Result<(), Failure> {
        let fail = |path: &[String], message: String| Failure {
            path: pointer(path),
            message,
        };
        if depth > MAX_DEPTH {
            return Err(fail(path, format!("schema nests deeper than {MAX_DEPTH}")));
        }
        // Alternatives that recurse (anyOf of two $refs to itself) would
        // otherwise take exponential time: a schema from a server is not trusted.
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > MAX_STEPS {
            return Err(fail(
                path,
                format!("checking takes more than {MAX_STEPS} steps; the schema is too costly"),
            ));
        }
        let schema = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => return Err(fail(path, "no value is allowed here".into())),
            Value::Object(o) => o,
            _ => return Ok(()),
        };
        if let Some(Value::String(target)) = schema.get("$ref") {
            let referred = resolve(&self.root, target)
                .ok_or_else(|| fail(path, format!("unresolvable $ref {target:?}")))?;
            self.at(referred, value, path, depth + 1)?;
        }
        if let Some(types) = schema.get("type") {
            let allowed: Vec<&str> = match types {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !allowed.iter().any(|t| has_type(value, t)) {
                return Err(fail(
                    path,
                    format!("expected {}, got {}", allowed.join(" or "), describe(value)),
                ));
            }
        }
        if let Some(Value::Array(options)) = schema.get("enum")
            && !options.iter().any(|o| json_eq(o, value))
        {
            return Err(fail(
                path,
                format!(
                    "{} is not one of {}",
                    describe(value),
                    Value::Array(options.clone())
                ),
            ));
        }
        if let Some(constant) = schema.get("const")
            && !json_eq(constant, value)
        {
            return Err(fail(
                path,
                format!("expected {constant}, got {}", describe(value)),
            ));
        }
        match value {
            Value::Number(n) => number(schema, n, path)?,
            Value::String(s) => self.string(schema, s, path)?,
            Value::Array(items) => self.array(schema, items, path, depth)?,
            Value::Object(members) => self.object(schema, members, path, depth)?,
            Value::Null | Value::Bool(_) => {}
        }
        self.combinators(schema, value, path, depth)
    }

    fn combinators(
        &self,
        schema: &Map<String, Value>,
        value: &Value,
        path: &mut Vec<String>,
        depth: usize,
    ) -> Result<(), Failure> {
        let here = pointer(path);
        let fail = |message: String| Failure {
            path: here.clone(),
            message,
        };
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for s in all {
                self.at(s, value, path, depth + 1)?;
            }
        }
        if let Some(Value::Array(any)) = schema.get("anyOf") {
            let mut first = None;
            let passed = any
                .iter()
                .any(|s| match self.at(s, value, path, depth + 1) {
                    Ok(()) => true,
                    Err(e) => {
                        first.get_or_insert(e);
                        false
                    }
                });
            if !passed && !any.is_empty() {
                return Err(fail(format!(
                    "matches none of the anyOf alternatives (the first says: {})",
                    first.map_or_else(String::new, |e| e.to_string())
                )));
            }
        }
        if let Some(Value::Array(one)) = schema.get("oneOf") {
            let matched = one
                .iter()
                .filter(|s| self.at(s, value, path, depth + 1).is_ok())
                .count();
            if matched != 1 {
                return Err(fail(format!(
                    "matches {matched} of the oneOf alternatives; exactly one must match"
                )));
            }
        }
        if let Some(not) = schema.get("not")
            && self.at(not, value, path, depth + 1).is_ok()
        {
            return Err(fail("matches the schema under \"not\"".into()));
        }
        if let Some(condition) = schema.get("if") {
            let branch = if self.at(condition, value, path, depth + 1).is_ok() {
                schema.get("then")
            } else {
                schema.get("else")
            };
            if let Some(branch) = branch {
                self.at(branch, value, path, depth + 1)?;
            }
        }
        Ok(())
    }

    fn string(&self, schema: &Map<String, Value>, s: &str, path: &[String]) -> Result<(), Failure> {
        let fail = |message: String| Failure {
            path: pointer(path),
            message,
        };
        let length = s.chars().count() as u64;
        within(schema, ("minLength", "maxLength"), length, |bound| {
            format!("is {length} characters long; {bound}")
        })
        .map_err(fail)?;
        if let Some(Value::String(pattern)) = schema.get("pattern")
            && !self.matches(pattern, s).map_err(fail)?
        {
            return Err(fail(format!(
                "{s:?} does not match the pattern {pattern:?}"
            )));
        }
        Ok(())
    }

    fn array(
        &self,
        schema: &Map<String, Value>,
        items: &[Value],
        path: &mut Vec<String>,
        depth: usize,
    ) -> Result<(), Failure> {
        let here = pointer(path);
        let fail = |message: String| Failure {
            path: here.clone(),
            message,
        };
        let count = items.len() as u64;
        within(schema, ("minItems", "maxItems"), count, |bound| {
            format!("has {count} items; {bound}")
        })
        .map_err(&fail)?;
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (i, a) in items.iter().enumerate() {
                if let Some(j) = items[..i].iter().position(|b| json_eq(a, b)) {
                    return Err(fail(format!(
                        "items {j} and {i} are equal; items must be unique"
                    )));
                }
            }
        }
        // 2020-12 spells positional items `prefixItems` and the rest `items`;
        // draft-07 spelled them `items` (an array) and `additionalItems`.
        let (prefix, rest) = match (schema.get("prefixItems"), schema.get("items")) {
            (Some(Value::Array(prefix)), rest) => (prefix.as_slice(), rest),
            (None, Some(Value::Array(prefix))) => {
                (prefix.as_slice(), schema.get("additionalItems"))
            }
            (_, rest) => (&[][..], rest),
        };
        for (i, item) in items.iter().enumerate() {
            let item_schema = match prefix.get(i) {
                Some(s) => Some(s),
                None => rest,
            };
            if let Some(s) = item_schema {
                path.push(i.to_string());
                let result = self.at(s, item, path, depth + 1);
                path.pop();
                result?;
            }
        }
        if let Some(contains) = schema.get("contains") {
            let matching = items
                .iter()
                .enumerate()
                .filter(|(i, item)| {
                    path.push(i.to_string());
                    let ok = self.at(contains, item, path, depth + 1).is_ok();
                    path.pop();
                    ok
                })
                .count() as u64;
            let min = schema
                .get("minContains")
                .and_then(Value::as_u64)
                .unwrap_or(1);
            if matching < min {
                return Err(fail(format!(
                    "has {matching} items matching \"contains\"; at least {min} required"
                )));
            }
            if let Some(max) = schema.get("maxContains").and_then(Value::as_u64)
                && matching > max
            {
                return Err(fail(format!(
                    "has {matching} items matching \"contains\"; at most {max} allowed"
                )));
            }
        }
        Ok(())
    }

    fn object(
        &self,
        schema: &Map<String, Value>,
        members: &Map<String, Value>,
        path: &mut Vec<String>,
        depth: usize,
    ) -> Result<(), Failure> {
        let here = pointer(path);
        let fail = |message: String| Failure {
            path: here.clone(),
            message,
        };
        let count = members.len() as u64;
        within(schema, ("minProperties", "maxProperties"), count, |bound| {
            format!("has {count} properties; {bound}")
        })
        .map_err(&fail)?;
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(name) {
                    return Err(fail(format!("missing required property {name:?}")));
                }
            }
        }
        if let Some(Value::Object(dependent)) = schema.get("dependentRequired") {
            for (present, needed) in dependent {
                if !members.contains_key(present) {
                    continue;
                }
                for name in needed
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if !members.contains_key(name) {
                        return Err(fail(format!(
                            "has {present:?}, so it must also have {name:?}"
                        )));
                    }
                }
            }
        }
        if let Some(Value::Object(dependent)) = schema.get("dependentSchemas") {
            for (present, s) in dependent {
                if members.contains_key(present) {
                    self.at(s, &Value::Object(members.clone()), path, depth + 1)?;
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let patterns = schema.get("patternProperties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        let names = schema.get("propertyNames");
        for (name, member) in members {
            if let Some(s) = names
                && let Err(e) = self.at(s, &Value::String(name.clone()), path, depth + 1)
            {
                return Err(fail(format!(
                    "property name {name:?} is not allowed: {}",
                    e.message
                )));
            }
            path.push(name.clone());
            let mut covered = false;
            let mut result = Ok(());
            if let Some(s) = properties.and_then(|p| p.get(name)) {
                covered = true;
                result = self.at(s, member, path, depth + 1);
            }
            for (pattern, s) in patterns.into_iter().flatten() {
                if result.is_err() {
                    break;
                }
                match self.matches(pattern, name) {
                    Ok(false) => {}
                    Ok(true) => {
                        covered = true;
                        result = self.at(s, member, path, depth + 1);
                    }
                    Err(message) => {
                        result = Err(Failure {
                            path: here.clone(),
                            message,
                        })
                    }
                }
            }
            if result.is_ok()
                && !covered
                && let Some(s) = additional
            {
                result = match s {
                    Value::Bool(false) => Err(Failure {
                        path: here.clone(),
                        message: format!("property {name:?} is not allowed"),
                    }),
                    s => self.at(s, member, path, depth + 1),
                };
            }
            path.pop();
            result?;
        }
        Ok(())
    }
}

/// A failure inside the walk, before it becomes a [`SchemaMismatch`].
struct Failure {
    path: String,
    message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(the whole value)"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

fn number(
    schema: &Map<String, Value>,
    n: &serde_json::Number,
    path: &[String],
) -> Result<(), Failure> {
    let fail = |message: String| Failure {
        path: pointer(path),
        message,
    };
    let v = n.as_f64().unwrap_or(f64::NAN);
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(min) = bound("minimum")
        && v < min
    {
        return Err(fail(format!("{n} is less than the minimum {min}")));
    }
    if let Some(max) = bound("maximum")
        && v > max
    {
        return Err(fail(format!("{n} is greater than the maximum {max}")));
    }
    if let Some(min) = bound("exclusiveMinimum")
        && v <= min
    {
        return Err(fail(format!("{n} must be greater than {min}")));
    }
    if let Some(max) = bound("exclusiveMaximum")
        && v >= max
    {
        return Err(fail(format!("{n} must be less than {max}")));
    }
    if let Some(step) = bound("multipleOf").filter(|s| *s > 0.0) {
        let multiple = match (n.as_i64(), schema.get("multipleOf").and_then(Value::as_i64)) {
            (Some(i), Some(s)) => i % s == 0,
            _ => {
                // The remainder, allowing for binary fractions (0.3 of 0.1).
                let r = (v % step).abs();
                r.is_finite() && r.min(step - r) <= step * 1e-9
            }
        };
        if !multiple {
            return Err(fail(format!("{n} is not a multiple of {step}")));
        }
    }
    Ok(())
}

/// `count` against the schema's `(min, max)` keywords; the message names the
/// bound broken (`says` puts it in a sentence).
fn within(
    schema: &Map<String, Value>,
    (min, max): (&str, &str),
    count: u64,
    says: impl Fn(String) -> String,
) -> Result<(), String> {
    if let Some(min) = schema.get(min).and_then(Value::as_u64)
        && count < min
    {
        return Err(says(format!("at least {min} required")));
    }
    if let Some(max) = schema.get(max).and_then(Value::as_u64)
        && count > max
    {
        return Err(says(format!("at most {max} allowed")));
    }
    Ok(())
}

/// Whether `value` has JSON Schema type `name` (an integer is also a number;
/// `1.0` is an integer).
fn has_type(value: &Value, name: &str) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// Equality as JSON Schema sees it: numbers by value (`1` equals `1.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A short description of a value for messages: its type, and itself when short.
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".into(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => return "an array".into(),
        Value::Object(_) => return "an object".into(),
    };
    let text = value.to_string();
    if text.len() <= 40 {
        format!("{kind} {text}")
    } else {
        kind.to_owned()
    }
}

/// The JSON Pointer of `path` (RFC 6901 escapes).
fn pointer(path: &[String]) -> String {
    path.iter()
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The schema `target` names within `root` (`#`, `#/$defs/...`, any local pointer).
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    let fragment = target.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    let decoded = percent_decode(fragment)?;
    root.pointer(&decoded)
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Walks the schema once: compiles its patterns, resolves its references, and
/// refuses what the checker would otherwise have to skip.
fn prepare(
    root: &Value,
    schema: &Value,
    at: &str,
    patterns: &mut HashMap<String, regex::Regex>,
    referred: &mut HashSet<String>,
) -> Result<(), UnusableSchema> {
    let unusable = |problem: String| UnusableSchema {
        at: at.to_owned(),
        problem,
    };
    let Value::Object(o) = schema else {
        return Ok(());
    };
    for keyword in UNSUPPORTED {
        if o.contains_key(*keyword) {
            return Err(unusable(format!("the keyword {keyword} is not supported")));
        }
    }
    if !at.is_empty() && o.contains_key("$id") {
        return Err(unusable(
            "a nested $id (another base URI) is not supported".into(),
        ));
    }
    if let Some(r) = o.get("$ref") {
        let target = r
            .as_str()
            .ok_or_else(|| unusable("$ref must be a string".into()))?;
        let Some(target_schema) = resolve(root, target) else {
            return Err(unusable(format!(
                "$ref {target:?} does not name a place in this schema (only local references are supported)"
            )));
        };
        // A target outside the keywords walked below (under an unknown
        // keyword) is walked too, once.
        if referred.insert(target.to_owned()) {
            let place = target.trim_start_matches('#');
            prepare(root, target_schema, place, patterns, referred)?;
        }
    }
    let mut compile = |pattern: &str| -> Result<(), UnusableSchema> {
        if !patterns.contains_key(pattern) {
            let regex = regex::Regex::new(pattern)
                .map_err(|e| unusable(format!("the pattern {pattern:?} cannot be checked: {e}")))?;
            patterns.insert(pattern.to_owned(), regex);
        }
        Ok(())
    };
    if let Some(Value::String(p)) = o.get("pattern") {
        compile(p)?;
    }
    if let Some(Value::Object(props)) = o.get("patternProperties") {
        for p in props.keys() {
            compile(p)?;
        }
    }
    // Subschemas: under these keywords, by name or position.
    for (keyword, sub) in o {
        let child = |key: &str| format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        match (keyword.as_str(), sub) {
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas",
                Value::Object(named),
            ) => {
                for (name, s) in named {
                    prepare(
                        root,
                        s,
                        &format!("{}{}", child(keyword), child(name)),
                        patterns,
                        referred,
                    )?;
                }
            }
            ("allOf" | "anyOf" | "oneOf" | "prefixItems" | "items", Value::Array(list)) => {
                for (i, s) in list.iter().enumerate() {
                    prepare(
                        root,
                        s,
                        &format!("{}/{i}", child(keyword)),
                        patterns,
                        referred,
                    )?;
                }
            }
            (
                "items"
                | "additionalItems"
                | "additionalProperties"
                | "propertyNames"
                | "contains"
                | "not"
                | "if"
                | "then"
                | "else",
                s,
            ) => prepare(root, s, &child(keyword), patterns, referred)?,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(schema: Value, value: Value) -> Result<(), String> {
        SchemaCheck::new(schema.as_object().unwrap())
            .unwrap()
            .check(&value)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn types_and_paths() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": { "type": "array", "items": { "type": "object",
                    "properties": { "price": { "type": "number" } }, "required": ["price"] } }
            }
        });
        assert!(
            check(
                schema.clone(),
                json!({"items": [{"price": 1}, {"price": 2.5}]})
            )
            .is_ok()
        );
        assert_eq!(
            check(
                schema.clone(),
                json!({"items": [{"price": 1}, {"price": "2"}]})
            )
            .unwrap_err(),
            "/items/1/price: expected number, got string \"2\""
        );
        assert_eq!(
            check(schema, json!({"items": [{}]})).unwrap_err(),
            "/items/0: missing required property \"price\""
        );
    }

    #[test]
    fn integers_accept_whole_floats_only() {
        let schema = json!({"type": "integer"});
        assert!(check(schema.clone(), json!(3)).is_ok());
        assert!(check(schema.clone(), json!(3.0)).is_ok());
        assert!(check(schema, json!(3.5)).is_err());
    }

    #[test]
    fn nullable_type_lists() {
        let schema = json!({"type": ["string", "null"]});
        assert!(check(schema.clone(), json!(null)).is_ok());
        assert_eq!(
            check(schema, json!(1)).unwrap_err(),
            "(the whole value): expected string or null, got number 1"
        );
    }

    #[test]
    fn additional_properties_false_names_the_stray() {
        let schema =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        assert_eq!(
            check(schema, json!({"a": 1, "b": 2})).unwrap_err(),
            "(the whole value): property \"b\" is not allowed"
        );
    }

    #[test]
    fn refs_resolve_locally() {
        let schema = json!({
            "type": "object",
            "properties": { "child": { "$ref": "#/$defs/Child" } },
            "$defs": { "Child": { "type": "object", "required": ["n"],
                "properties": { "n": { "type": "integer", "minimum": 0 } } } }
        });
        assert!(check(schema.clone(), json!({"child": {"n": 0}})).is_ok());
        assert_eq!(
            check(schema, json!({"child": {"n": -1}})).unwrap_err(),
            "/child/n: -1 is less than the minimum 0"
        );
    }

    #[test]
    fn strings_enums_consts() {
        let schema =
            json!({"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"});
        assert!(check(schema.clone(), json!("ab")).is_ok());
        assert!(check(schema.clone(), json!("a")).is_err());
        assert!(check(schema.clone(), json!("abcd")).is_err());
        assert!(check(schema, json!("AB")).is_err());
        // Lengths count characters, not bytes.
        assert!(check(json!({"maxLength": 2}), json!("éé")).is_ok());
        assert!(check(json!({"enum": [1, "x"]}), json!(1.0)).is_ok());
        assert!(check(json!({"enum": [1, "x"]}), json!("y")).is_err());
        assert!(check(json!({"const": {"a": [1]}}), json!({"a": [1.0]})).is_ok());
        assert!(check(json!({"const": true}), json!(false)).is_err());
    }

    #[test]
    fn numbers() {
        assert!(check(json!({"exclusiveMinimum": 0}), json!(0)).is_err());
        assert!(check(json!({"exclusiveMaximum": 1}), json!(0.5)).is_ok());
        assert!(check(json!({"maximum": 1}), json!(1.5)).is_err());
        assert!(check(json!({"multipleOf": 0.1}), json!(0.3)).is_ok());
        assert!(check(json!({"multipleOf": 3}), json!(10)).is_err());
        assert!(check(json!({"multipleOf": 1.5}), json!(-4.5)).is_ok());
        // Large values are held to the same step.
        assert!(check(json!({"multipleOf": 1.0}), json!(1e12 + 0.5)).is_err());
    }

    #[test]
    fn arrays() {
        assert!(check(json!({"uniqueItems": true}), json!([1, 1.0])).is_err());
        assert!(check(json!({"minItems": 1}), json!([])).is_err());
        assert!(check(json!({"maxItems": 1}), json!([1, 2])).is_err());
        let tuple = json!({"prefixItems": [{"type": "string"}], "items": false});
        assert!(check(tuple.clone(), json!(["a"])).is_ok());
        assert!(check(tuple, json!(["a", 1])).is_err());
        let draft7 = json!({"items": [{"type": "string"}], "additionalItems": {"type": "integer"}});
        assert!(check(draft7.clone(), json!(["a", 1])).is_ok());
        assert!(check(draft7, json!(["a", "b"])).is_err());
        let contains = json!({"contains": {"type": "string"}, "minContains": 2});
        assert!(check(contains.clone(), json!(["a", 1, "b"])).is_ok());
        assert!(check(contains, json!(["a", 1])).is_err());
    }

    #[test]
    fn objects() {
        assert!(check(json!({"minProperties": 1}), json!({})).is_err());
        assert!(check(json!({"dependentRequired": {"a": ["b"]}}), json!({"a": 1})).is_err());
        assert!(check(json!({"dependentRequired": {"a": ["b"]}}), json!({"b": 1})).is_ok());
        let pattern = json!({"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false});
        assert!(check(pattern.clone(), json!({"x-a": "s"})).is_ok());
        assert!(check(pattern.clone(), json!({"x-a": 1})).is_err());
        assert!(check(pattern, json!({"y": "s"})).is_err());
        assert!(
            check(
                json!({"propertyNames": {"maxLength": 2}}),
                json!({"abc": 1})
            )
            .is_err()
        );
    }

    #[test]
    fn combinators() {
        let any = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert!(check(any.clone(), json!(1)).is_ok());
        assert!(check(any, json!(1.5)).is_err());
        let one = json!({"oneOf": [{"type": "number"}, {"type": "integer"}]});
        assert!(check(one.clone(), json!(1.5)).is_ok());
        assert!(check(one, json!(1)).is_err());
        assert!(check(json!({"not": {"type": "null"}}), json!(null)).is_err());
        assert!(check(json!({"allOf": [{"minimum": 1}, {"maximum": 2}]}), json!(3)).is_err());
        let conditional = json!({"if": {"properties": {"kind": {"const": "a"}}},
            "then": {"required": ["a"]}, "else": {"required": ["b"]}});
        assert!(check(conditional.clone(), json!({"kind": "a", "a": 1})).is_ok());
        assert!(check(conditional.clone(), json!({"kind": "a", "b": 1})).is_err());
        assert!(check(conditional, json!({"kind": "z", "b": 1})).is_ok());
        assert!(
            check(
                json!({"type": "object", "properties": {"a": false}}),
                json!({"a": 1})
            )
            .is_err()
        );
    }

    #[test]
    fn annotations_and_unknown_keywords_are_ignored() {
        let schema =
            json!({"type": "string", "format": "email", "title": "t", "x-mcp-header": "H"});
        assert!(check(schema, json!("not an email")).is_ok());
    }

    #[test]
    fn what_cannot_be_checked_is_refused_at_build() {
        for (schema, says) in [
            (
                json!({"unevaluatedProperties": false}),
                "unevaluatedProperties",
            ),
            (
                json!({"properties": {"a": {"$dynamicRef": "#x"}}}),
                "$dynamicRef",
            ),
            (
                json!({"$ref": "https://example.com/s.json"}),
                "only local references",
            ),
            (json!({"$ref": "#/$defs/Missing"}), "only local references"),
            (json!({"pattern": "(?<=a)b"}), "cannot be checked"),
            (json!({"items": {"$id": "other"}}), "nested $id"),
        ] {
            let e = SchemaCheck::new(schema.as_object().unwrap()).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
        }
        let e = SchemaCheck::new(
            json!({"properties": {"a/b": {"$ref": "#/nope"}}})
                .as_object()
                .unwrap(),
        )
        .unwrap_err();
        assert_eq!(e.at, "/properties/a~1b");
    }

    #[test]
    fn what_a_ref_reaches_under_an_unknown_keyword_is_prepared_too() {
        let e = SchemaCheck::new(
            json!({"$ref": "#/x-custom/s", "x-custom": {"s": {"unevaluatedItems": false}}})
                .as_object()
                .unwrap(),
        )
        .unwrap_err();
        assert_eq!(e.at, "/x-custom/s");
    }

    #[test]
    fn a_pattern_reached_only_through_a_ref_is_still_checked() {
        let schema = json!({"$ref": "#/x-custom/s", "x-custom": {"s": {"pattern": "^a"}}});
        assert!(check(schema.clone(), json!("ab")).is_ok());
        assert!(check(schema, json!("ba")).is_err());
    }

    #[test]
    fn alternatives_that_recurse_stop_at_the_step_budget() {
        let schema = json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}},
                            "$ref": "#/$defs/a"});
        let started = std::time::Instant::now();
        let problem = check(schema, json!(1)).unwrap_err();
        assert!(
            problem.contains("anyOf") || problem.contains("steps"),
            "{problem}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_self_referencing_schema_stops_at_its_depth_limit() {
        let schema = json!({"$ref": "#"});
        assert!(check(schema, json!(1)).unwrap_err().contains("deeper than"));
    }
}
