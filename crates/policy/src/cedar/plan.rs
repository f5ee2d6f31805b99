//! What the engine works out once, at load, so that a call costs only what
//! its own facts decide.
//!
//! A described tool's resolutions are finite: its variants' and its static
//! one. For each, every policy that can apply to the tool is put to Cedar's
//! partial evaluator with the resolution known and the principal, the
//! arguments (`context.input`) and the session (`context.session`)
//! unknown. A policy whose value does not depend on them is decided there,
//! once. At a call, only the others are evaluated, and of those scoped to
//! one principal (`principal == NS::User::"x"`) only the call's principal's;
//! the ones that do not read the arguments are remembered per principal and
//! session. Cedar's answer is the same as over the whole set: a satisfied
//! forbid denies, else a satisfied permit allows, else nothing does. A call
//! whose resolution is not one of these (a server that resolves its own
//! calls) is decided over the whole set.

use std::collections::HashMap;
use std::sync::Arc;

use cedar_policy::{Effect, PolicyId, PolicySet};
use cedar_policy_core::ast::{self, EntityUID};
use cedar_policy_core::extensions::Extensions;
use mcp_resolve::hints::HintTableExt;
use mcp_resolve_runtime::Annotations;

use super::Engine;
use super::table::{Factor, reads};
use crate::Call;

/// The value of one policy on one request.
#[derive(Clone, Debug)]
pub(crate) enum Holds {
    Yes,
    No,
    /// Evaluation failed (Cedar skips the policy; a forbid refuses here).
    Failed(String),
}

/// A policy evaluated at calls: Cedar's own, with its condition built once
/// (scope and body, as Cedar's evaluator builds it for every evaluation),
/// its id in the set, and whether it reads the arguments (the others are
/// remembered per principal and session).
pub(crate) type Live = (ast::Policy, ast::Expr, PolicyId, bool);

/// What the partial evaluation of a resolution decides.
#[derive(Default)]
pub(crate) struct Known {
    /// Forbids that hold whatever the unknowns are.
    pub(crate) forbids: Vec<PolicyId>,
    /// Permits that hold whatever the unknowns are.
    pub(crate) permits: Vec<PolicyId>,
    /// The policies whose value depends on the unknowns, in set order.
    pub(crate) residual: Vec<PolicyId>,
}

/// A resolution computed at load.
pub(crate) struct Row {
    variant: Option<String>,
    annotations: Annotations,
    scopes: Vec<String>,
    pub(crate) known: Known,
    /// The residual policies, for a principal none of them is scoped to.
    rest: Vec<Live>,
    /// The same for each principal some are scoped to (theirs included).
    by_principal: HashMap<EntityUID, Vec<Live>>,
}

impl Row {
    /// The policies to evaluate at a call by `principal`.
    pub(crate) fn rest(&self, principal: &EntityUID) -> &[Live] {
        self.by_principal.get(principal).unwrap_or(&self.rest)
    }
}

/// A described tool's plan: its rows.
pub(crate) struct Plan {
    rows: Vec<Row>,
}

impl Plan {
    /// The row computed for `call`'s resolution, if any, and its place.
    pub(crate) fn row(&self, call: &Call<'_>) -> Option<(usize, &Row)> {
        if !call.described {
            return None;
        }
        self.rows.iter().enumerate().find(|(_, r)| {
            r.variant.as_deref() == call.variant
                && r.annotations == *call.annotations
                && r.scopes.as_slice() == call.scopes
        })
    }
}

/// The resolutions of a tool: each variant's, and the static one.
pub(crate) fn resolutions(
    server: &mcp_resolve::ir::Server,
    tool: &mcp_resolve::ir::Tool,
) -> Vec<(Option<String>, Annotations, Vec<String>)> {
    let mut cases: Vec<(Option<String>, Annotations, Vec<String>)> = tool
        .variants
        .iter()
        .map(|v| {
            (
                Some(v.name.clone()),
                server.hints.to_annotations(&v.annotations),
                v.required_scopes.iter().map(|(s, _)| s.clone()).collect(),
            )
        })
        .collect();
    cases.push((
        None,
        server.hints.to_annotations(&tool.annotations),
        tool.required_scopes.clone(),
    ));
    cases
}

impl Engine {
    /// The policies that can apply to `tool`'s calls.
    pub(crate) fn slice(&self, tool: &str) -> &PolicySet {
        self.by_tool.get(tool).unwrap_or(&self.policies)
    }

    /// Cedar's partial evaluation of every policy that can apply to a call
    /// with this resolution, the principal, arguments and session unknown.
    pub(crate) fn known(&self, call: &Call<'_>) -> Result<Known, String> {
        let [resolution, _] = self.context(call);
        let context = ast::Context::from_pairs(
            [
                resolution,
                (
                    "input".into(),
                    ast::RestrictedExpr::unknown(ast::Unknown::new_untyped("input")),
                ),
                (
                    "session".into(),
                    ast::RestrictedExpr::unknown(ast::Unknown::new_untyped("session")),
                ),
            ],
            Extensions::all_available(),
        )
        .map_err(|e| e.to_string())?;
        let (_, entities) = self.bare_request(call)?;
        let request = ast::Request::new_with_unknowns(
            ast::EntityUIDEntry::unknown(),
            ast::EntityUIDEntry::known(super::uid(&self.action, call.tool), None),
            ast::EntityUIDEntry::known(self.resource.clone(), None),
            Some(context),
            None::<&ast::RequestSchemaAllPass>,
            Extensions::all_available(),
        )
        .map_err(|e| e.to_string())?;
        let evaluator = cedar_policy_core::evaluator::Evaluator::new(
            request,
            &entities,
            Extensions::all_available(),
        );
        let all: &ast::PolicySet = self.policies.as_ref();
        let mut known = Known::default();
        for policy in self.slice(call.tool).policies() {
            let id: &ast::PolicyID = policy.id().as_ref();
            let Some(ast) = all.get(id) else {
                continue;
            };
            let value = evaluator.partial_interpret(&ast.condition(), ast.env());
            let forbid = policy.effect() == Effect::Forbid;
            match value {
                Ok(ast::PartialValue::Value(v)) => match v.value_kind() {
                    ast::ValueKind::Lit(ast::Literal::Bool(true)) if forbid => {
                        known.forbids.push(policy.id().clone());
                    }
                    ast::ValueKind::Lit(ast::Literal::Bool(true)) => {
                        known.permits.push(policy.id().clone());
                    }
                    ast::ValueKind::Lit(ast::Literal::Bool(false)) => {}
                    // Not a boolean: what a call makes of it decides.
                    _ => known.residual.push(policy.id().clone()),
                },
                // Depends on the unknowns; and an error is left to the call
                // too, which evaluates it with everything known.
                Ok(ast::PartialValue::Residual(_)) | Err(_) => {
                    known.residual.push(policy.id().clone());
                }
            }
        }
        let index = |id: &PolicyId| self.named.get(id).map_or(usize::MAX, |n| n.index);
        known.forbids.sort_by_key(index);
        known.permits.sort_by_key(index);
        known.residual.sort_by_key(index);
        Ok(known)
    }

    /// The plans of the described, typed tools of `server`.
    pub(crate) fn plan(&mut self, server: &mcp_resolve::ir::Server) -> Result<(), String> {
        let mut plans = HashMap::new();
        let all: &ast::PolicySet = self.policies.as_ref();
        let live = |id: &PolicyId| -> Result<(Live, Option<EntityUID>), String> {
            let ast_id: &ast::PolicyID = id.as_ref();
            let ast = all
                .get(ast_id)
                .ok_or_else(|| format!("the policy `{id}` is not in the set"))?;
            let policy = self
                .policies
                .policy(id)
                .ok_or_else(|| format!("the policy `{id}` is not in the set"))?;
            let input = reads(policy).0.contains(&Factor::Arguments);
            let scoped = match policy.principal_constraint() {
                cedar_policy::PrincipalConstraint::Eq(uid) => {
                    Some(AsRef::<EntityUID>::as_ref(&uid).clone())
                }
                _ => None,
            };
            Ok(((ast.clone(), ast.condition(), id.clone(), input), scoped))
        };
        for tool in &server.tools {
            if !self.by_tool.contains_key(&tool.name) {
                continue;
            }
            let mut rows = Vec::new();
            for (variant, annotations, scopes) in resolutions(server, tool) {
                let call = Call {
                    tool: &tool.name,
                    arguments: None,
                    variant: variant.as_deref(),
                    annotations: &annotations,
                    scopes: &scopes,
                    described: true,
                    principal: None,
                    session: None,
                };
                let known = self.known(&call)?;
                let mut rest = Vec::new();
                let mut scoped = Vec::new();
                for id in &known.residual {
                    match live(id)? {
                        (live, None) => rest.push(live),
                        (live, Some(uid)) => scoped.push((live, uid)),
                    }
                }
                let mut by_principal: HashMap<EntityUID, Vec<Live>> = HashMap::new();
                for (live, uid) in scoped {
                    by_principal
                        .entry(uid)
                        .or_insert_with(|| rest.clone())
                        .push(live);
                }
                let index = |id: &PolicyId| self.named.get(id).map_or(usize::MAX, |n| n.index);
                for list in by_principal.values_mut() {
                    list.sort_by_key(|(_, _, id, _)| index(id));
                }
                rows.push(Row {
                    variant,
                    annotations,
                    scopes,
                    known,
                    rest,
                    by_principal,
                });
            }
            plans.insert(tool.name.clone(), Plan { rows });
        }
        self.plans = plans;
        Ok(())
    }
}

/// What the policies that read the principal or the session but not the
/// arguments are remembered by: the call's tool and resolution, principal
/// and session.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MemoKey {
    tool: String,
    row: usize,
    principal: EntityUID,
    protocol_version: Option<String>,
    client_name: Option<String>,
    token_client: Option<String>,
    token_scopes: Vec<String>,
}

impl MemoKey {
    pub(crate) fn of(call: &Call<'_>, row: usize, principal: &EntityUID) -> MemoKey {
        MemoKey {
            tool: call.tool.to_string(),
            row,
            principal: principal.clone(),
            protocol_version: call.session.and_then(|s| s.protocol_version.clone()),
            client_name: call.session.and_then(|s| s.client_name.clone()),
            token_client: call.principal.and_then(|p| p.client_id.clone()),
            token_scopes: call
                .principal
                .map(|p| p.scopes.iter().cloned().collect())
                .unwrap_or_default(),
        }
    }
}

/// The remembered values of a rest list's policies that do not read the
/// arguments: (place in the list, value).
pub(crate) type Remembered = Arc<Vec<(usize, Holds)>>;

/// How many remembered values the engine keeps before it starts over.
pub(crate) const MEMO_LIMIT: usize = 4096;
