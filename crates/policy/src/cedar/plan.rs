//! What the engine works out once, at load, so that a call costs only what
//! its own facts decide.
//!
//! A policy that reads nothing but the action and `context.resolution` has
//! one value per resolution, and a described tool's resolutions are its
//! variants' (and its static one): those values are computed at load, per
//! tool and variant, with Cedar. At a call, only the policies that read
//! more (the arguments, the principal, the session) are evaluated, and of
//! those scoped to one principal (`principal == NS::User::"x"`) only the
//! call's principal's. Cedar's answer is then the same as over the whole
//! set: a satisfied forbid denies, else a satisfied permit allows, else
//! nothing does. A call whose resolution is not one computed at load (a
//! server that resolves its own calls) is decided over the whole set.

use std::collections::HashMap;

use cedar_policy::{Effect, PolicyId, PolicySet};
use cedar_policy_core::ast::{self, EntityUID};
use mcp_resolve::hints::HintTableExt;
use mcp_resolve_runtime::Annotations;

use super::Engine;
use super::table::reads;
use crate::Call;

/// The value of one policy on one request.
#[derive(Clone, Debug)]
pub(crate) enum Holds {
    Yes,
    No,
    /// Evaluation failed (Cedar skips the policy; a forbid refuses here).
    Failed(String),
}

/// A resolution computed at load, and the known policies that hold on it.
pub(crate) struct Row {
    variant: Option<String>,
    annotations: Annotations,
    scopes: Vec<String>,
    pub(crate) forbids: Vec<PolicyId>,
    pub(crate) permits: Vec<PolicyId>,
    pub(crate) failed: Vec<(PolicyId, String)>,
}

/// A policy evaluated at calls: Cedar's own, with its condition built once
/// (scope and body, as Cedar's evaluator builds it for every evaluation),
/// its id in the set, and whether it reads the arguments (the others are
/// remembered per principal and session).
pub(crate) type Live = (ast::Policy, ast::Expr, PolicyId, bool);

/// A described tool's plan.
pub(crate) struct Plan {
    rows: Vec<Row>,
    /// The policies that read more than the resolution, for a principal
    /// none of them is scoped to.
    rest: Vec<Live>,
    /// The same for each principal some are scoped to (theirs included).
    by_principal: HashMap<EntityUID, Vec<Live>>,
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

    /// The policies to evaluate at a call by `principal`.
    pub(crate) fn rest(&self, principal: &EntityUID) -> &[Live] {
        self.by_principal.get(principal).unwrap_or(&self.rest)
    }
}

impl Engine {
    /// The value of `policy` alone on a request.
    pub(crate) fn holds(
        &self,
        policy: &cedar_policy::Policy,
        request: &ast::Request,
        entities: &cedar_policy_core::entities::Entities,
    ) -> Holds {
        let mut one = PolicySet::new();
        if one.add(policy.clone()).is_err() {
            return Holds::Failed("the policy cannot be evaluated alone".into());
        }
        let response: cedar_policy::Response = self
            .authorizer
            .is_authorized(request.clone(), one.as_ref(), entities)
            .into();
        if let Some(error) = response.diagnostics().errors().next() {
            return Holds::Failed(error.to_string());
        }
        if response.diagnostics().reason().any(|id| id == policy.id()) {
            Holds::Yes
        } else {
            Holds::No
        }
    }

    /// The plans of the described, typed tools of `server`.
    pub(crate) fn plan(&mut self, server: &mcp_resolve::ir::Server) -> Result<(), String> {
        let mut plans = HashMap::new();
        for tool in &server.tools {
            let Some(slice) = self.by_tool.get(&tool.name) else {
                continue;
            };
            let mut known = Vec::new();
            let mut rest = Vec::new();
            for policy in slice.policies() {
                if reads(policy).0.is_empty() {
                    known.push(policy);
                } else {
                    rest.push(policy);
                }
            }
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
            let mut rows = Vec::new();
            for (variant, annotations, scopes) in cases {
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
                let (request, entities) = self.bare_request(&call)?;
                let mut row = Row {
                    variant: variant.clone(),
                    annotations: annotations.clone(),
                    scopes: scopes.clone(),
                    forbids: Vec::new(),
                    permits: Vec::new(),
                    failed: Vec::new(),
                };
                for policy in &known {
                    let forbid = policy.effect() == Effect::Forbid;
                    match (self.holds(policy, &request, &entities), forbid) {
                        (Holds::Yes, true) => row.forbids.push(policy.id().clone()),
                        (Holds::Yes, false) => row.permits.push(policy.id().clone()),
                        (Holds::Failed(e), true) => row.failed.push((policy.id().clone(), e)),
                        _ => {}
                    }
                }
                rows.push(row);
            }
            let scoped = |policy: &cedar_policy::Policy| match policy.principal_constraint() {
                cedar_policy::PrincipalConstraint::Eq(uid) => Some(uid),
                _ => None,
            };
            let all: &ast::PolicySet = self.policies.as_ref();
            let live = |policy: &cedar_policy::Policy| -> Result<Live, String> {
                let id: &ast::PolicyID = policy.id().as_ref();
                let ast = all
                    .get(id)
                    .ok_or_else(|| format!("the policy `{id}` is not in the set"))?;
                let input = reads(policy).0.contains(&super::table::Factor::Arguments);
                Ok((ast.clone(), ast.condition(), policy.id().clone(), input))
            };
            let mut unscoped = Vec::new();
            for policy in rest.iter().filter(|p| scoped(p).is_none()) {
                unscoped.push(live(policy)?);
            }
            let mut by_principal: HashMap<EntityUID, Vec<Live>> = HashMap::new();
            for policy in &rest {
                if let Some(uid) = scoped(policy) {
                    let uid: EntityUID = uid.as_ref().clone();
                    by_principal
                        .entry(uid)
                        .or_insert_with(|| unscoped.clone())
                        .push(live(policy)?);
                }
            }
            // In the set's order.
            let index = |id: &PolicyId| self.named.get(id).map_or(usize::MAX, |n| n.index);
            unscoped.sort_by_key(|(_, _, id, _)| index(id));
            for list in by_principal.values_mut() {
                list.sort_by_key(|(_, _, id, _)| index(id));
            }
            plans.insert(
                tool.name.clone(),
                Plan {
                    rows,
                    rest: unscoped,
                    by_principal,
                },
            );
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
pub(crate) type Remembered = std::sync::Arc<Vec<(usize, Holds)>>;

/// How many remembered values the engine keeps before it starts over.
pub(crate) const MEMO_LIMIT: usize = 4096;
