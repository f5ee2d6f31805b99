//! `unknown-argument`, `value-not-allowed`, `invalid-regex`.
//!
//! Why: a pattern over an argument the schema does not define, or comparing
//! with a value the schema can never hold, can never match as intended — a
//! typo that silently sends calls to a later variant. A regex that does not
//! compile cannot be evaluated at all.

use serde_json::{Map, Value};

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{ArgPath, Pred, PredKind, Tool, Variant};
use crate::regex_cache::compile_pattern;
use crate::schema::{Property, deref, property, schema_types, subschema as lookup_subschema};
use crate::suggest;

pub(super) fn check_tool(
    tool: &Tool,
    validator: Option<&jsonschema::Validator>,
    diags: &mut Vec<Diagnostic>,
) {
    let ok = &validator.is_some();
    for v in &tool.variants {
        v.when.walk(&mut |path, pred| {
            let known = *ok && check_path(tool, v, path, diags);
            if let Some(pred) = pred {
                pred.walk_deep(&mut |p| {
                    if let PredKind::Pattern(re) = &p.kind
                        && let Err(e) = compile_pattern(re)
                    {
                        diags.push(
                            Diagnostic::new(
                                Code::InvalidRegex,
                                format!("invalid regex `{re}`: {e}"),
                            )
                            .at(p.loc.0)
                            .for_tool(&tool.name)
                            .for_variant(&v.name),
                        );
                    }
                });
                if known && let Some(validator) = validator {
                    check_values(tool, v, path, pred, validator, diags);
                }
                if known && let Some(schema) = lookup_subschema(&tool.input_schema, &path.segments)
                {
                    let at = Nested {
                        tool,
                        variant: v,
                        what: path.to_string(),
                    };
                    at.check(schema, pred, diags);
                }
            }
        });
    }
}

/// Property names inside `items`, `contains` and `properties` (where a
/// macro's `x.field` lands): each must be declared by the schema of the
/// value it applies to, as argument paths must.
struct Nested<'a> {
    tool: &'a Tool,
    variant: &'a Variant,
    /// The argument, and `[]` per level of items.
    what: String,
}

impl<'a> Nested<'a> {
    fn check(&self, schema: &'a Value, pred: &Pred, diags: &mut Vec<Diagnostic>) {
        let root = &self.tool.input_schema;
        let schema = deref(root, schema);
        match &pred.kind {
            PredKind::Not(p) => self.check(schema, p, diags),
            PredKind::AnyOf(ps) | PredKind::AllOf(ps) => {
                ps.iter().for_each(|p| self.check(schema, p, diags));
            }
            PredKind::Items(p) | PredKind::Contains(p) => {
                let items = match schema.get("items") {
                    Some(s @ (Value::Object(_) | Value::Bool(_))) => s,
                    _ => return,
                };
                let inner = Nested {
                    what: format!("{}[]", self.what),
                    tool: self.tool,
                    variant: self.variant,
                };
                inner.check(items, p, diags);
            }
            PredKind::Properties(ps) => {
                for (name, p) in ps {
                    if let Some(next) = self.field(schema, name, p, diags) {
                        let inner = Nested {
                            what: format!("{}.{name}", self.what),
                            tool: self.tool,
                            variant: self.variant,
                        };
                        inner.check(next, p, diags);
                    }
                }
            }
            PredKind::Required(names) => {
                for name in names {
                    self.field(schema, name, pred, diags);
                }
            }
            _ => {}
        }
    }

    /// The schema of field `name`; `None` after reporting an undeclared one
    /// (or when the schema admits it without describing it).
    fn field(
        &self,
        schema: &'a Value,
        name: &str,
        at: &Pred,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<&'a Value> {
        // A macro's `x.f` is both `required` and `properties`: one report.
        let message = format!(
            "tool `{}` has no field `{name}` in `{}`",
            self.tool.name, self.what
        );
        match property(&self.tool.input_schema, schema, name) {
            Property::Declared(next) => Some(next),
            Property::Open => None,
            Property::Undeclared { known } => {
                let help = suggest::closest(name, known.iter().copied())
                    .map(|n| format!("did you mean `{n}`?"))
                    .unwrap_or_else(|| {
                        if known.is_empty() {
                            format!("the items of `{}` declare no fields", self.what)
                        } else {
                            format!(
                                "the fields of `{}` are {}",
                                self.what,
                                suggest::backticked(&known, ", ")
                            )
                        }
                    });
                if diags.iter().any(|d| {
                    d.message == message && d.variant.as_deref() == Some(&self.variant.name)
                }) {
                    return None;
                }
                diags.push(
                    Diagnostic::new(Code::UnknownArgument, message)
                        .labeled(at.loc.0, "not in the inputSchema")
                        .for_tool(&self.tool.name)
                        .for_variant(&self.variant.name)
                        .with_help(help),
                );
                None
            }
        }
    }
}

/// Checks each segment exists; `false` (after a diagnostic, or when the
/// schema admits the name without describing it) when one is not declared.
fn check_path(tool: &Tool, v: &Variant, path: &ArgPath, diags: &mut Vec<Diagnostic>) -> bool {
    let root = &tool.input_schema;
    let mut schema = deref(root, root);
    for (i, seg) in path.segments.iter().enumerate() {
        let names = match property(root, schema, seg) {
            Property::Declared(next) => {
                schema = next;
                continue;
            }
            Property::Open => return false,
            Property::Undeclared { known } => known,
        };
        let prefix = path.segments[..i].join(".");
        let full = |n: &str| {
            if prefix.is_empty() {
                n.to_string()
            } else {
                format!("{prefix}.{n}")
            }
        };
        let help = suggest::closest(seg, names.iter().copied())
            .map(|n| format!("did you mean `{}`?", full(n)))
            .unwrap_or_else(|| {
                if names.is_empty() {
                    return format!(
                        "the inputSchema declares no {} and admits no others",
                        if prefix.is_empty() {
                            "arguments".to_string()
                        } else {
                            format!("fields of `{prefix}`")
                        }
                    );
                }
                format!(
                    "the {} are {}",
                    if prefix.is_empty() {
                        "arguments".to_string()
                    } else {
                        format!("fields of `{prefix}`")
                    },
                    names
                        .iter()
                        .map(|n| format!("`{}`", full(n)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        // Whether or not the schema refuses undeclared keys, a name it does
        // not describe is a typo in practice: the declared properties are
        // the tool's vocabulary.
        let mut diagnostic = Diagnostic::new(
            Code::UnknownArgument,
            format!("tool `{}` has no argument `{}`", tool.name, full(seg)),
        )
        .labeled(path.loc.0, "not in the inputSchema");
        // A top-level argument is written as its own name: the fix replaces
        // it with the closest declared one.
        if path.segments.len() == 1
            && let Some(closest) = suggest::closest(seg, names.iter().copied())
        {
            diagnostic =
                diagnostic.with_fix(format!("replace with `{closest}`"), path.loc.0, closest);
        }
        diags.push(
            diagnostic
                .for_tool(&tool.name)
                .for_variant(&v.name)
                .with_help(help),
        );
        return false;
    }
    true
}

fn check_values(
    tool: &Tool,
    v: &Variant,
    path: &ArgPath,
    pred: &Pred,
    validator: &jsonschema::Validator,
    diags: &mut Vec<Diagnostic>,
) {
    let pointer: String = path
        .segments
        .iter()
        .map(|s| format!("/{}", escape_pointer(s)))
        .collect();
    let subschema = lookup_subschema(&tool.input_schema, &path.segments);
    pred.walk(&mut |p| {
        let literals: Vec<&Value> = match &p.kind {
            PredKind::Const(c) => vec![c],
            PredKind::Enum(values) => values.iter().collect(),
            PredKind::Type(types) => {
                if let Some(allowed) = subschema.and_then(schema_types)
                    && !types
                        .iter()
                        .any(|t| allowed.iter().any(|a| types_overlap(t, a)))
                {
                    diags.push(
                        Diagnostic::new(
                            Code::ValueNotAllowed,
                            format!(
                                "argument `{path}` is {}, never {}",
                                suggest::backticked(&allowed, " or "),
                                suggest::backticked(types, " or "),
                            ),
                        )
                        .at(p.loc.0)
                        .for_tool(&tool.name)
                        .for_variant(&v.name),
                    );
                }
                Vec::new()
            }
            _ => Vec::new(),
        };
        for literal in literals {
            let instance = nest(&path.segments, literal.clone());
            let problem = validator
                .iter_errors(&instance)
                .find(|e| e.instance_path().to_string().starts_with(&pointer))
                .map(|e| e.to_string());
            if let Some(problem) = problem {
                let allowed = subschema
                    .and_then(|s| s.get("enum"))
                    .and_then(Value::as_array)
                    .map(|e| {
                        e.iter()
                            .map(Value::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    });
                let help = match (&allowed, literal.as_str()) {
                    (Some(_), Some(s)) => {
                        let names: Vec<String> = subschema
                            .and_then(|s| s.get("enum"))
                            .and_then(Value::as_array)
                            .map(|e| {
                                e.iter()
                                    .filter_map(Value::as_str)
                                    .map(str::to_string)
                                    .collect()
                            })
                            .unwrap_or_default();
                        suggest::did_you_mean(s, names.iter().map(String::as_str))
                            .or_else(|| allowed.as_ref().map(|a| format!("allowed values are {a}")))
                    }
                    (Some(a), None) => Some(format!("allowed values are {a}")),
                    _ => None,
                };
                diags.push(
                    Diagnostic::new(
                        Code::ValueNotAllowed,
                        format!(
                            "argument `{path}` can never be `{literal}`: {}",
                            shorten(&problem)
                        ),
                    )
                    .at(p.loc.0)
                    .for_tool(&tool.name)
                    .for_variant(&v.name)
                    .with_help_opt(help),
                );
            }
        }
    });
}

fn shorten(s: &str) -> String {
    let line = s.lines().next().unwrap_or(s);
    if line.chars().count() > 160 {
        format!("{}…", line.chars().take(160).collect::<String>())
    } else {
        line.to_string()
    }
}

fn types_overlap(a: &str, b: &str) -> bool {
    a == b || matches!((a, b), ("integer", "number") | ("number", "integer"))
}

fn nest(segments: &[String], value: Value) -> Value {
    segments.iter().rev().fold(value, |inner, seg| {
        let mut map = Map::new();
        map.insert(seg.clone(), inner);
        Value::Object(map)
    })
}

fn escape_pointer(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}
