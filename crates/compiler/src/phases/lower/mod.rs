//! AST to IR: groups files into servers, resolves hints and inheritance,
//! and lowers both `when` syntaxes to one [`Cond`].

use std::collections::BTreeSet;

use crate::ast::{self, HintSetting, Matcher, RulesFile, ValueMatcher, When};
use crate::diagnostic::{Code, Diagnostic};
use crate::hints::{HintDef, HintSet, HintTable, HintTableExt, tightest_bound};
use crate::ir::*;
use crate::source::Span;
use crate::suggest;

pub mod expr;

/// Groups `files` by the server they declare and lowers each group.
pub fn lower(files: &[RulesFile], diags: &mut Vec<Diagnostic>) -> Vec<Server> {
    let mut servers: Vec<(ast::ServerDecl, Vec<&RulesFile>)> = Vec::new();
    let mut orphans = Vec::new();
    for file in files {
        match &file.server {
            Some(decl) => match servers
                .iter_mut()
                .find(|(s, _)| s.name.value == decl.name.value)
            {
                Some((first, group)) => {
                    if first.version.value != decl.version.value {
                        diags.push(
                            Diagnostic::new(
                                Code::ServerMismatch,
                                format!(
                                    "server `{}` is declared with version `{}` here and `{}` elsewhere",
                                    decl.name.value, decl.version.value, first.version.value
                                ),
                            )
                            .at(decl.version.span)
                            .with_related(first.version.span, "first declared here"),
                        );
                    }
                    group.push(file);
                }
                None => servers.push((decl.clone(), vec![file])),
            },
            None => orphans.push(file),
        }
    }
    for file in orphans {
        if servers.len() == 1 {
            servers[0].1.push(file);
        } else {
            diags.push(
                Diagnostic::new(Code::MissingField, "missing field `server` in rules file")
                    .at(Span::new(file.file, 0, 0))
                    .with_help(if servers.is_empty() {
                        "declare the server: `server: { name: …, version: … }` in YAML, `server NAME version VERSION` in `.rules`".to_string()
                    } else {
                        "several servers are given; say which one this file belongs to".to_string()
                    }),
            );
        }
    }
    servers
        .into_iter()
        .map(|(decl, group)| lower_server(&decl, &group, diags))
        .collect()
}

fn lower_server(
    decl: &ast::ServerDecl,
    files: &[&RulesFile],
    diags: &mut Vec<Diagnostic>,
) -> Server {
    let mut hints = HintTable::default();
    let mut declared: Vec<&ast::HintDecl> = Vec::new();
    for hint in files.iter().flat_map(|f| &f.hints) {
        if let Some(prev) = declared.iter().find(|d| d.name.value == hint.name.value) {
            if prev.worst != hint.worst || prev.default != hint.default {
                diags.push(
                    Diagnostic::new(
                        Code::ServerMismatch,
                        format!("hint `{}` is declared twice, differently", hint.name.value),
                    )
                    .at(hint.name.span)
                    .with_related(prev.name.span, "first declared here"),
                );
            }
            continue;
        }
        let ok = hints.declare(HintDef::declared(
            hint.name.value.clone(),
            hint.default,
            hint.worst,
        ));
        if ok {
            declared.push(hint);
        } else {
            diags.push(
                Diagnostic::new(
                    Code::DuplicateHint,
                    format!(
                        "hint `{}` is built in and cannot be redeclared",
                        hint.name.value
                    ),
                )
                .at(hint.name.span),
            );
        }
    }
    let mut tools = Vec::new();
    for file in files {
        for tool in &file.tools {
            if let Some(t) = lower_tool(tool, &hints, diags) {
                tools.push(t);
            }
        }
    }
    Server {
        name: decl.name.value.clone(),
        version: decl.version.value.clone(),
        hints,
        tools,
        files: files.iter().map(|f| f.file).collect(),
    }
}

fn lower_settings(
    settings: &[HintSetting],
    hints: &HintTable,
    tool: &str,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Setting> {
    let mut out: Vec<Setting> = Vec::new();
    for s in settings {
        match hints.index(&s.name.value) {
            Some(i) => out.push(Setting {
                hint: i,
                value: s.value.value,
                loc: Loc(Span::new(
                    s.name.span.file,
                    s.name.span.start,
                    s.value.span.end,
                )),
            }),
            None => {
                let mut d = Diagnostic::new(
                    Code::UnknownField,
                    format!("unknown hint `{}`", s.name.value),
                )
                .at(s.name.span)
                .for_tool(tool)
                .with_help(
                    suggest::did_you_mean(&s.name.value, hints.names()).unwrap_or_else(|| {
                        "declare extra hints under `hints:` at the top of the file".into()
                    }),
                );
                if let Some(closest) = suggest::closest(&s.name.value, hints.names()) {
                    d = d.with_fix(format!("replace with `{closest}`"), s.name.span, closest);
                }
                diags.push(d);
            }
        }
    }
    out
}

fn apply(base: &HintSet, settings: &[Setting]) -> HintSet {
    let mut set = base.clone();
    for s in settings {
        set.set(s.hint, s.value);
    }
    set
}

fn lower_tool(
    tool: &ast::ToolDecl,
    hints: &HintTable,
    diags: &mut Vec<Diagnostic>,
) -> Option<Tool> {
    let name = tool.name.value.clone();
    let (input_schema, schema_loc) = match &tool.input_schema {
        Some(ast::SchemaSource::Inline(s)) => (s.value.clone(), Loc(s.span)),
        Some(ast::SchemaSource::File { path, schema }) => (schema.clone()?, Loc(path.span)),
        None => return None,
    };
    let written = tool
        .annotations
        .as_ref()
        .map(|a| lower_settings(a, hints, &name, diags));
    let base = match &written {
        Some(w) => apply(&hints.defaults(), w),
        None => hints.defaults(),
    };
    let static_scopes: Option<Vec<String>> = tool
        .required_scopes
        .as_ref()
        .map(|s| s.iter().map(|x| x.value.clone()).collect());
    let mut variants = Vec::new();
    for v in tool.variants.iter().flatten() {
        let overrides = lower_settings(&v.annotations, hints, &name, diags);
        let annotations = apply(&base, &overrides);
        let required_scopes = match &v.required_scopes {
            Some(s) => s.iter().map(|x| (x.value.clone(), Loc(x.span))).collect(),
            None => static_scopes
                .iter()
                .flatten()
                .map(|s| (s.clone(), Loc(v.name.span)))
                .collect(),
        };
        variants.push(Variant {
            name: v.name.value.clone(),
            loc: Loc(v.span),
            when: lower_when(&v.when, &input_schema, diags),
            overrides,
            annotations,
            required_scopes,
        });
    }
    let annotations = match &written {
        Some(_) => base,
        // SPEC §3.2: the tightest bound of every variant and, while the
        // variants are not known to be exhaustive, of the defaults too.
        None => {
            let defaults = hints.defaults();
            tightest_bound(
                hints,
                variants.iter().map(|v| &v.annotations).chain([&defaults]),
            )
        }
    };
    let scopes_written = static_scopes.is_some();
    let required_scopes = static_scopes.unwrap_or_else(|| {
        let union: BTreeSet<String> = variants.iter().flat_map(|v| v.scopes()).collect();
        union.into_iter().collect()
    });
    Some(Tool {
        name,
        name_loc: Loc(tool.name.span),
        title: tool.title.clone(),
        description: tool.description.clone(),
        input_schema,
        schema_loc,
        output_schema: tool.output_schema.as_ref().map(|s| s.value.clone()),
        output_schema_loc: Loc(tool
            .output_schema
            .as_ref()
            .map_or(tool.name.span, |s| s.span)),
        annotations,
        annotations_title: tool.annotations_title.as_ref().map(|t| t.value.clone()),
        members: [
            ("icons", &tool.icons),
            ("execution", &tool.execution),
            ("_meta", &tool.meta),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), v.as_ref()?.value.clone())))
        .collect(),
        trust: match tool.trust.as_ref().map(|t| &t.value) {
            Some(serde_json::Value::Object(map)) => Some(map.clone()),
            _ => None,
        },
        written_annotations: written,
        required_scopes,
        scopes_written,
        resolvable: tool.variants.is_some(),
        variants,
    })
}

/// Lowers a `when` condition; expressions are typed against `schema`.
pub fn lower_when(when: &When, schema: &serde_json::Value, diags: &mut Vec<Diagnostic>) -> Cond {
    match when {
        When::Always(_) => Cond::Const(true),
        When::Invalid(_) => Cond::Const(false),
        When::Structured(conjunctions) => {
            let mut any: Vec<Cond> = conjunctions
                .iter()
                .map(|c| {
                    let mut all: Vec<Cond> = c
                        .entries
                        .iter()
                        .map(|(path, m)| lower_entry(path, m))
                        .collect();
                    match all.len() {
                        0 => Cond::Const(true),
                        1 => all.pop().unwrap_or(Cond::Const(true)),
                        _ => Cond::And(all),
                    }
                })
                .collect();
            match any.len() {
                0 => Cond::Const(false),
                1 => any.pop().unwrap_or(Cond::Const(false)),
                _ => Cond::Or(any),
            }
        }
        When::Expr(e) => expr::Lowerer { schema, diags }
            .cond(e)
            .unwrap_or(Cond::Const(false)),
    }
}

fn lower_entry(path: &crate::source::Spanned<String>, matcher: &Matcher) -> Cond {
    let arg = ArgPath {
        segments: path.value.split('.').map(str::to_string).collect(),
        loc: Loc(path.span),
    };
    match matcher {
        Matcher::Absent(a) if a.value => Cond::Not(Box::new(Cond::Present(arg))),
        Matcher::Absent(_) => Cond::Present(arg),
        Matcher::Value(v) => Cond::Test(arg, lower_pred(v)),
    }
}

/// Lowers a value matcher to a predicate.
pub fn lower_pred(m: &ValueMatcher) -> Pred {
    let kind = match m {
        ValueMatcher::Const(v) => PredKind::Const(v.value.clone()),
        ValueMatcher::Enum(v) => PredKind::Enum(v.value.clone()),
        ValueMatcher::Type(v) => PredKind::Type(v.value.clone()),
        ValueMatcher::Pattern(v) => PredKind::Pattern(v.value.clone()),
        ValueMatcher::MinLength(v) => PredKind::MinLength(v.value),
        ValueMatcher::MaxLength(v) => PredKind::MaxLength(v.value),
        ValueMatcher::Minimum(v) => PredKind::Minimum(v.value.clone()),
        ValueMatcher::Maximum(v) => PredKind::Maximum(v.value.clone()),
        ValueMatcher::ExclusiveMinimum(v) => PredKind::ExclusiveMinimum(v.value.clone()),
        ValueMatcher::ExclusiveMaximum(v) => PredKind::ExclusiveMaximum(v.value.clone()),
        ValueMatcher::Not(inner, _) => PredKind::Not(Box::new(lower_pred(inner))),
        ValueMatcher::AnyOf(ps, _) => PredKind::AnyOf(ps.iter().map(lower_pred).collect()),
        ValueMatcher::AllOf(ps, _) => PredKind::AllOf(ps.iter().map(lower_pred).collect()),
        ValueMatcher::MinItems(v) => PredKind::MinItems(v.value),
        ValueMatcher::MaxItems(v) => PredKind::MaxItems(v.value),
        ValueMatcher::Items(inner, _) => PredKind::Items(Box::new(lower_pred(inner))),
        ValueMatcher::Contains(inner, _) => PredKind::Contains(Box::new(lower_pred(inner))),
        // Each property's predicate is located at its name, where
        // diagnostics about the property point.
        ValueMatcher::Properties(ps, _) => PredKind::Properties(
            ps.iter()
                .map(|(k, m)| {
                    let mut p = lower_pred(m);
                    p.loc = Loc(k.span);
                    (k.value.clone(), p)
                })
                .collect(),
        ),
        ValueMatcher::Required(v) => PredKind::Required(v.value.clone()),
    };
    Pred {
        kind,
        loc: Loc(m.span()),
    }
}
