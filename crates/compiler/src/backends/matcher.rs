//! Rules compiled at load time into the runtime's [`Matcher`], for servers
//! and proxies that resolve without a build step. The lowering makes the
//! code generator's decisions (`codegen::matching`): constants folded,
//! enums of strings as string compares, literal patterns as
//! prefix/suffix/substring checks, regexes compiled once, each outcome's
//! answer text computed once.

use mcp_resolve_host::matcher::{Check, Matcher, Test, ToolSpec};
use mcp_resolve_runtime::{Dialect, Resolution, json::Num};
use serde_json::Value;

use crate::hints::HintTableExt;
use crate::ir::{Cond, Pred, PredKind, Server};
use crate::regex_cache::compile_pattern;
use crate::resolve::ResolverError;
use crate::schema::literal::literal_pattern;

/// Compiles every tool of `server` for `dialect`: the same answers as
/// [`crate::Resolver`], in a fraction of the time.
pub fn compile(server: &Server, dialect: Dialect) -> Result<Matcher, ResolverError> {
    let hints = &server.hints;
    let tools = server
        .tools
        .iter()
        .map(|tool| {
            let resolution = |variant: Option<String>, annotations, required_scopes| Resolution {
                tool: tool.name.clone(),
                variant,
                annotations,
                required_scopes,
            };
            ToolSpec {
                name: tool.name.clone(),
                input_schema: tool.input_schema.clone(),
                list_entry: tool.to_model(hints).list_entry(dialect),
                resolvable: tool.resolvable,
                variants: tool
                    .variants
                    .iter()
                    .map(|v| {
                        (
                            test(&v.when),
                            resolution(
                                Some(v.name.clone()),
                                hints.to_annotations(&v.annotations),
                                v.scopes(),
                            ),
                        )
                    })
                    .collect(),
                fallback: resolution(
                    None,
                    hints.to_annotations(&tool.annotations),
                    tool.required_scopes.clone(),
                ),
            }
        })
        .collect();
    Matcher::new(tools, dialect).map_err(|e| ResolverError {
        tool: e.tool,
        message: e.error.to_string(),
    })
}

/// A condition as a runtime test, constants folded.
fn test(cond: &Cond) -> Test {
    match cond {
        Cond::Const(b) => Test::Const(*b),
        Cond::And(cs) => join_tests(cs.iter().map(test).collect(), true),
        Cond::Or(cs) => join_tests(cs.iter().map(test).collect(), false),
        Cond::Not(inner) => match test(inner) {
            Test::Const(b) => Test::Const(!b),
            Test::Not(twice) => *twice,
            other => Test::Not(Box::new(other)),
        },
        Cond::Present(path) => Test::Present(path.segments.clone()),
        Cond::Test(path, pred) => match check(pred) {
            Check::Const(false) => Test::Const(false),
            Check::Const(true) => Test::Present(path.segments.clone()),
            c => Test::At(path.segments.clone(), c),
        },
    }
}

fn join_tests(parts: Vec<Test>, and: bool) -> Test {
    let mut kept = Vec::new();
    for part in parts {
        match part {
            Test::Const(b) if b != and => return Test::Const(b),
            Test::Const(_) => {}
            other => kept.push(other),
        }
    }
    match kept.len() {
        0 => Test::Const(and),
        1 => kept.pop().unwrap_or(Test::Const(and)),
        _ if and => Test::All(kept),
        _ => Test::Any(kept),
    }
}

/// A predicate as a runtime check, constants folded.
fn check(pred: &Pred) -> Check {
    match &pred.kind {
        PredKind::Const(Value::String(s)) => Check::Str(s.clone()),
        PredKind::Const(c) => Check::Equals(c.clone()),
        PredKind::Enum(values) => {
            let mut strings: Vec<String> = Vec::new();
            for s in values.iter().filter_map(Value::as_str) {
                if !strings.iter().any(|k| k == s) {
                    strings.push(s.to_string());
                }
            }
            let mut parts = Vec::new();
            match strings.len() {
                0 => {}
                1 => parts.extend(strings.pop().map(Check::Str)),
                _ => parts.push(Check::Strs(strings)),
            }
            parts.extend(
                values
                    .iter()
                    .filter(|v| !v.is_string())
                    .map(|v| Check::Equals(v.clone())),
            );
            join_checks(parts, false)
        }
        PredKind::Type(types) => Check::Type(types.clone()),
        PredKind::Pattern(re) => match literal_pattern(re) {
            Some(lit) => match (lit.start, lit.end) {
                (true, true) => Check::Exact(lit.text),
                _ if lit.text.is_empty() => Check::Const(true),
                (true, false) => Check::Prefix(lit.text),
                (false, true) => Check::Suffix(lit.text),
                (false, false) => Check::Contains(lit.text),
            },
            None => Check::Pattern(compile_pattern(re).ok()),
        },
        PredKind::MinLength(0) | PredKind::MinItems(0) => Check::Const(true),
        PredKind::MinLength(n) => Check::MinLength(*n),
        PredKind::MaxLength(n) => Check::MaxLength(*n),
        PredKind::Minimum(n) => Check::Minimum(Num::of(n)),
        PredKind::Maximum(n) => Check::Maximum(Num::of(n)),
        PredKind::ExclusiveMinimum(n) => Check::ExclusiveMinimum(Num::of(n)),
        PredKind::ExclusiveMaximum(n) => Check::ExclusiveMaximum(Num::of(n)),
        PredKind::Not(inner) => match check(inner) {
            Check::Const(b) => Check::Const(!b),
            Check::Not(twice) => *twice,
            other => Check::Not(Box::new(other)),
        },
        PredKind::AnyOf(ps) => join_checks(ps.iter().map(check).collect(), false),
        PredKind::AllOf(ps) => join_checks(ps.iter().map(check).collect(), true),
        PredKind::MinItems(n) => Check::MinItems(*n),
        PredKind::MaxItems(n) => Check::MaxItems(*n),
        PredKind::Items(inner) => match check(inner) {
            Check::Const(true) => Check::Const(true),
            other => Check::Items(Box::new(other)),
        },
        PredKind::Contains(inner) => Check::ContainsItem(Box::new(check(inner))),
        PredKind::Properties(ps) => {
            let mut kept = Vec::new();
            for (key, p) in ps {
                match check(p) {
                    Check::Const(true) => {}
                    c => kept.push((key.clone(), c)),
                }
            }
            if kept.is_empty() {
                Check::Const(true)
            } else {
                Check::Properties(kept)
            }
        }
        PredKind::Required(keys) if keys.is_empty() => Check::Const(true),
        PredKind::Required(keys) => Check::Required(keys.clone()),
    }
}

fn join_checks(parts: Vec<Check>, and: bool) -> Check {
    let mut kept = Vec::new();
    for part in parts {
        match part {
            Check::Const(b) if b != and => return Check::Const(b),
            Check::Const(_) => {}
            other => kept.push(other),
        }
    }
    match kept.len() {
        0 => Check::Const(and),
        1 => kept.pop().unwrap_or(Check::Const(and)),
        _ if and => Check::AllOf(kept),
        _ => Check::AnyOf(kept),
    }
}
