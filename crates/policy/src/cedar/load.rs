//! Loading policies: Cedar's parser and strict validator, their
//! diagnostics as the project's (file, line, column), and the principal of
//! calls without a token.

use std::collections::{BTreeMap, HashMap};

use cedar_policy::{Effect, PolicyId, PolicySet};
use cedar_policy_core::ast::EntityUID;
use mcp_resolve::diagnostic::{Code, Diagnostic};
use mcp_resolve::source::{FileId, Span};

use super::schema::{self, ServerSchema};
use super::{Named, Source, entity_type, uid};

fn span_of(file: FileId, d: &dyn miette::Diagnostic) -> Option<Span> {
    let label = d.labels()?.next()?;
    let start = label.offset();
    Some(Span::new(file, start, start + label.len()))
}

/// Cedar's diagnostics (and their related ones) as the project's.
pub(super) fn diagnostics(
    code: Code,
    file: FileId,
    d: &dyn miette::Diagnostic,
    out: &mut Vec<Diagnostic>,
) {
    if let Some(related) = d.related() {
        let before = out.len();
        for r in related {
            diagnostics(code, file, r, out);
        }
        if out.len() > before {
            return;
        }
    }
    let mut diagnostic = Diagnostic::new(code, d.to_string());
    if let Some(span) = span_of(file, d) {
        diagnostic = diagnostic.at(span);
    }
    if let Some(help) = d.help() {
        diagnostic = diagnostic.with_help(help.to_string());
    }
    out.push(diagnostic);
}

/// The line (1-based) of `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}

/// `--principal TYPE::"id"`: the type is `User` or `Anonymous`, with or
/// without the server's namespace; `NS::Anonymous::"anonymous"` when none
/// is given.
pub(super) fn parse_principal(
    schema: &ServerSchema,
    text: Option<&str>,
) -> Result<EntityUID, String> {
    let Some(text) = text else {
        return Ok(uid(
            &entity_type(&schema.namespace, schema::ANONYMOUS)?,
            "anonymous",
        ));
    };
    let parsed: cedar_policy::EntityUid =
        text.trim()
            .parse()
            .map_err(|e: cedar_policy::ParseErrors| {
                format!("`{text}` is not a Cedar entity (`User::\"alice\"`): {e}")
            })?;
    let kind = parsed.type_name().basename();
    let namespace = parsed.type_name().namespace();
    let known = [schema::USER, schema::ANONYMOUS];
    if !known.contains(&kind) || !(namespace.is_empty() || namespace == schema.namespace) {
        return Err(format!(
            "the principal `{text}` is not of a principal type of the schema: `{}::User` or `{}::Anonymous`",
            schema.namespace, schema.namespace
        ));
    }
    Ok(uid(
        &entity_type(&schema.namespace, kind)?,
        parsed.id().unescaped(),
    ))
}

/// Parses every source into one set, each file once; policies are
/// renumbered `policy0`, `policy1`, … in source order (as Cedar's CLI
/// numbers one file holding them all).
pub(super) fn parse(
    sources: &[Source<'_>],
) -> (PolicySet, HashMap<PolicyId, Named>, Vec<Diagnostic>) {
    let mut set = PolicySet::new();
    let mut named = HashMap::new();
    let mut errors = Vec::new();
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for source in sources {
        // Cedar's own parser; its policies know where they were written.
        let parsed = match cedar_policy_core::parser::parse_policyset(source.text) {
            Ok(parsed) => parsed,
            Err(e) => {
                diagnostics(Code::Syntax, source.file, &e, &mut errors);
                continue;
            }
        };
        if let Some(template) = parsed.templates().find(|t| t.slots().next().is_some()) {
            let offset = template.loc().map_or(0, |l| l.start());
            errors.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    "a policy template (`?principal`, `?resource`) needs links, which the proxy does not make: write static policies",
                )
                .at(Span::new(source.file, offset, offset)),
            );
            continue;
        }
        let offsets: HashMap<String, usize> = parsed
            .policies()
            .filter_map(|p| Some((p.id().to_string(), p.loc()?.start())))
            .collect();
        let parsed = PolicySet::from(parsed);
        let mut policies: Vec<&cedar_policy::Policy> = parsed.policies().collect();
        policies.sort_by_key(|p| {
            p.id()
                .to_string()
                .trim_start_matches("policy")
                .parse::<usize>()
                .unwrap_or(usize::MAX)
        });
        for policy in policies {
            let index = named.len();
            let id = PolicyId::new(format!("policy{index}"));
            let offset = offsets.get(&policy.id().to_string()).copied().unwrap_or(0);
            let name = policy.annotation("id").map_or_else(
                || format!("{}:{}", source.name, line_of(source.text, offset)),
                str::to_string,
            );
            if names.insert(name.clone(), index).is_some() {
                errors.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("two policies are named `{name}`"),
                    )
                    .at(Span::new(source.file, offset, offset))
                    .with_help("give each policy its own `@id`"),
                );
            }
            named.insert(
                id.clone(),
                Named {
                    name,
                    forbid: policy.effect() == Effect::Forbid,
                    ask: policy.annotation("ask").map(|a| {
                        if a.is_empty() {
                            "a policy asks".to_string()
                        } else {
                            a.to_string()
                        }
                    }),
                    default: policy.annotation("yaml_default").is_some(),
                    index,
                    file: source.file,
                },
            );
            let _ = set.add(policy.new_id(id));
        }
    }
    (set, named, errors)
}

/// Strict validation against the schema, each error at its place.
pub(super) fn validate(
    schema: &ServerSchema,
    policies: &PolicySet,
    named: &HashMap<PolicyId, Named>,
) -> Vec<Diagnostic> {
    let validator = cedar_policy::Validator::new(schema.schema.clone());
    let result = validator.validate(policies, cedar_policy::ValidationMode::Strict);
    let mut out = Vec::new();
    for error in result.validation_errors() {
        let policy = named.get(error.policy_id());
        let file = policy.map_or(FileId(0), |n| n.file);
        diagnostics(Code::InvalidValue, file, error, &mut out);
        if let (Some(last), Some(n)) = (out.last_mut(), policy) {
            last.message = format!("policy `{}`: {}", n.name, last.message);
        }
    }
    out
}
