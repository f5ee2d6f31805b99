//! Cedar policies over resolved calls.
//!
//! The request for a `tools/call`:
//!
//! - principal: `NS::User::"<sub>"` for a verified token's subject, the
//!   configured principal (`--principal`) otherwise, else
//!   `NS::Anonymous::"anonymous"`;
//! - action: `NS::Action::"<tool>"`, in `NS::Action::"call_tool"`;
//! - resource: `NS::McpServer::"<server name>"`;
//! - context: `input` (the arguments, typed as cedar-for-agents types them;
//!   absent for a tool the rules do not describe), `resolution` (`variant`
//!   when one matched, `described`, `requiredScopes`, and every hint's
//!   resolved value) and `session` (`protocolVersion`, `clientName`,
//!   `tokenClient`, `tokenScopes`).
//!
//! Cedar decides permit or forbid. A permit whose determining policies
//! include one annotated `@ask("why")` is an `ask`. A forbid that cannot be
//! evaluated on a call (Cedar skips it) refuses the call here: security
//! decisions fail closed. Policies are named by their `@id` annotation, else
//! by `file:line`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use cedar_policy::{PolicyId, PolicySet};
use cedar_policy_core::ast::{self, EntityUID};
use cedar_policy_core::extensions::Extensions;
use mcp_resolve::diagnostic::{Code, Diagnostic};
use mcp_resolve::source::FileId;
use smol_str::SmolStr;

use crate::{Call, Decision};

mod load;
mod plan;
mod request;
pub mod schema;
pub mod table;
pub mod translate;
mod typed;

pub use schema::{ServerSchema, namespace_of};

/// Why a Cedar engine, schema or request cannot be made. Each kind carries
/// the message of the step that refused (Cedar's own, or the rules').
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CedarError {
    /// The server's Cedar schema (from its rules) cannot be made.
    #[error("{0}")]
    Schema(String),
    /// The policy text does not parse or cannot be put to the schema.
    #[error("{0}")]
    Policy(String),
    /// `--principal` does not name an entity of the schema.
    #[error("{0}")]
    Principal(String),
    /// A call cannot be made a Cedar request.
    #[error("{0}")]
    Request(String),
}

/// A policy of the set, as errors and audit lines name it.
#[derive(Clone, Debug)]
pub struct Named {
    /// Its `@id`, else `file:line`.
    pub name: String,
    /// Permit or forbid.
    pub forbid: bool,
    /// Its `@ask` reason (a permit that asks).
    pub ask: Option<String>,
    /// The default of a translated YAML policy: not named in decisions.
    pub default: bool,
    /// Its place in the set (the order policies are listed in).
    pub index: usize,
    /// The file it was written in.
    pub file: FileId,
}

/// A decision and what made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// What happens.
    pub decision: Decision,
    /// The determining policies, by name, in the set's order (empty: no
    /// policy permits, or a YAML policy's default decided).
    pub policies: Vec<String>,
    /// Why the user is asked (the `@ask` reasons), or why the call was
    /// refused when no policy refused it (an error).
    pub reason: Option<String>,
}

/// Cedar policy sources: file and text.
pub struct Source<'a> {
    /// The file, for diagnostics.
    pub file: FileId,
    /// Its name as diagnostics and policy names show it.
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// The decision engine: a validated policy set over a server's schema.
pub struct Engine {
    schema: ServerSchema,
    policies: PolicySet,
    named: HashMap<PolicyId, Named>,
    /// For each described tool, the policies whose scope can name its
    /// action (the others can never apply to its calls).
    pub(crate) by_tool: HashMap<String, PolicySet>,
    pub(crate) authorizer: cedar_policy_core::authorizer::Authorizer,
    /// The schema's action entities (`Action::"t" in Action::"call_tool"`).
    actions: cedar_policy_core::entities::Entities,
    resource: EntityUID,
    principal: EntityUID,
    hints: Vec<SmolStr>,
    user: ast::EntityType,
    action: ast::EntityType,
    /// Per described tool, what is worked out at load.
    plans: HashMap<String, plan::Plan>,
    /// The values of the policies that read the principal or the session
    /// but not the arguments, per tool, resolution, principal and session.
    memo: std::sync::Mutex<HashMap<plan::MemoKey, plan::Remembered>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("schema", &self.schema)
            .field("policies", &self.named.len())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// The engine for `sources` over the rules of `server`: every policy is
    /// parsed and validated (strict mode) against the server's schema, and
    /// every problem is reported at its place, with Cedar's own words.
    /// `principal` is the principal of calls without a token (`TYPE::"id"`,
    /// the type `User` or `Anonymous`, namespace optional).
    pub fn load(
        server: &mcp_resolve::ir::Server,
        sources: &[Source<'_>],
        principal: Option<&str>,
    ) -> Result<Engine, Vec<Diagnostic>> {
        let schema = ServerSchema::of(server)
            .map_err(|e| vec![Diagnostic::new(Code::InvalidSchema, e.to_string())])?;
        let (policies, named, errors) = load::parse(sources);
        let mut errors = errors;
        if errors.is_empty() {
            errors.extend(load::validate(&schema, &policies, &named));
        }
        let principal = load::parse_principal(&schema, principal);
        if let Err(e) = &principal {
            errors.push(Diagnostic::new(Code::InvalidValue, e.clone()));
        }
        let principal = match principal {
            Ok(p) if errors.is_empty() => p,
            _ => return Err(errors),
        };
        Engine::new(server, schema, policies, named, principal)
            .map_err(|e| vec![Diagnostic::new(Code::InvalidValue, e)])
    }

    /// The engine for a policy set that needs no validation (a YAML
    /// policy's translation, checked by the YAML parser).
    pub fn unvalidated(
        server: &mcp_resolve::ir::Server,
        text: &str,
        principal: Option<&str>,
    ) -> Result<Engine, CedarError> {
        let schema = ServerSchema::of(server)?;
        let source = Source {
            file: FileId(0),
            name: "policy",
            text,
        };
        let (policies, named, errors) = load::parse(std::slice::from_ref(&source));
        if let Some(e) = errors.first() {
            return Err(CedarError::Policy(e.message.clone()));
        }
        let principal = load::parse_principal(&schema, principal).map_err(CedarError::Principal)?;
        Engine::new(server, schema, policies, named, principal).map_err(CedarError::Policy)
    }

    /// The engine of a YAML policy: its Cedar translation
    /// ([`translate::to_cedar`]).
    pub fn from_yaml(
        server: &mcp_resolve::ir::Server,
        policy: &crate::yaml::Policy,
        principal: Option<&str>,
    ) -> Result<Engine, CedarError> {
        let namespace = namespace_of(&server.name);
        Engine::unvalidated(server, &translate::to_cedar(policy, &namespace), principal)
    }

    fn new(
        server: &mcp_resolve::ir::Server,
        schema: ServerSchema,
        policies: PolicySet,
        named: HashMap<PolicyId, Named>,
        principal: EntityUID,
    ) -> Result<Engine, String> {
        let actions: cedar_policy::Entities =
            cedar_policy::Entities::from_entities([], Some(&schema.schema))
                .map_err(|e| e.to_string())?;
        let actions = actions.as_ref().clone();
        let call_tool = cedar_policy::EntityUid::from_type_name_and_id(
            format!("{}::Action", schema.namespace)
                .parse()
                .map_err(|e: cedar_policy::ParseErrors| e.to_string())?,
            cedar_policy::EntityId::new(schema::CALL_TOOL),
        );
        let mut by_tool = HashMap::new();
        for tool in &schema.tools {
            let action = cedar_policy::EntityUid::from_type_name_and_id(
                call_tool.type_name().clone(),
                cedar_policy::EntityId::new(tool),
            );
            let mut slice = PolicySet::new();
            for policy in policies.policies() {
                let applies = match policy.action_constraint() {
                    cedar_policy::ActionConstraint::Any => true,
                    cedar_policy::ActionConstraint::Eq(a) => a == action,
                    cedar_policy::ActionConstraint::In(list) => {
                        list.iter().any(|a| *a == action || *a == call_tool)
                    }
                };
                if applies {
                    slice.add(policy.clone()).map_err(|e| e.to_string())?;
                }
            }
            by_tool.insert(tool.clone(), slice);
        }
        let resource = uid(
            &entity_type(&schema.namespace, schema::SERVER)?,
            &schema.server,
        );
        let user = entity_type(&schema.namespace, schema::USER)?;
        let action_type = entity_type(&schema.namespace, "Action")?;
        let hints = schema.hints.iter().map(SmolStr::from).collect();
        let mut engine = Engine {
            schema,
            policies,
            named,
            by_tool,
            authorizer: cedar_policy_core::authorizer::Authorizer::new(),
            actions,
            resource,
            principal,
            hints,
            user,
            action: action_type,
            plans: HashMap::new(),
            memo: Default::default(),
        };
        engine.plan(server)?;
        Ok(engine)
    }

    /// The server's schema.
    pub fn schema(&self) -> &ServerSchema {
        &self.schema
    }

    /// The policies, named, in the set's order.
    pub fn policies(&self) -> Vec<&Named> {
        let mut all: Vec<&Named> = self.named.values().collect();
        all.sort_by_key(|n| n.index);
        all
    }

    /// The policy set.
    pub fn policy_set(&self) -> &PolicySet {
        &self.policies
    }

    /// The policies that read a call's variant (`context.resolution.variant`,
    /// or a YAML rule's `variant:`), by name: they need the rules a variant
    /// comes from.
    pub fn naming_variants(&self) -> Vec<&str> {
        fn reads_variant(node: &serde_json::Value) -> bool {
            match node {
                serde_json::Value::Object(map) => {
                    map.get("attr").and_then(serde_json::Value::as_str) == Some("variant")
                        || map.values().any(reads_variant)
                }
                serde_json::Value::Array(items) => items.iter().any(reads_variant),
                _ => false,
            }
        }
        let mut naming: Vec<&Named> = self
            .named
            .iter()
            .filter(|(id, named)| {
                !named.default
                    && self
                        .policies
                        .policy(id)
                        .and_then(|policy| policy.to_json().ok())
                        .is_some_and(|est| reads_variant(&est))
            })
            .map(|(_, named)| named)
            .collect();
        naming.sort_by_key(|named| named.index);
        naming
            .into_iter()
            .map(|named| named.name.as_str())
            .collect()
    }

    /// The named policy of `id`.
    pub fn named(&self, id: &PolicyId) -> Option<&Named> {
        self.named.get(id)
    }

    /// The decision on `call`.
    pub fn decide(&self, call: &Call<'_>) -> Outcome {
        if let Some(plan) = self.plans.get(call.tool)
            && let Some((index, row)) = plan.row(call)
        {
            // The policies that read only the resolution were decided at
            // load; the rest are evaluated now.
            let mut tally = Tally::default();
            let names = |ids: &[PolicyId]| ids.iter().filter_map(|id| self.named.get(id)).collect();
            tally.forbids = names(&row.known.forbids);
            tally.permits = names(&row.known.permits);
            let principal = self.principal_of(call);
            let rest = row.rest(&principal);
            // The policies that do not read the arguments: remembered.
            if rest.iter().any(|live| !live.3) {
                let key = plan::MemoKey::of(call, index, &principal);
                let remembered = self.memo.lock().ok().and_then(|m| m.get(&key).cloned());
                let values = match remembered {
                    Some(values) => values,
                    None => {
                        let values = match self.bare_request(call) {
                            Ok((request, entities)) => {
                                let evaluator = cedar_policy_core::evaluator::Evaluator::new(
                                    request,
                                    &entities,
                                    Extensions::all_available(),
                                );
                                Arc::new(
                                    rest.iter()
                                        .enumerate()
                                        .filter(|(_, live)| !live.3)
                                        .map(|(i, (policy, condition, _, _))| {
                                            (i, evaluate(&evaluator, policy, condition))
                                        })
                                        .collect::<Vec<_>>(),
                                )
                            }
                            Err(why) => {
                                return Outcome {
                                    decision: Decision::Deny,
                                    policies: Vec::new(),
                                    reason: Some(why),
                                };
                            }
                        };
                        if let Ok(mut memo) = self.memo.lock() {
                            if memo.len() >= plan::MEMO_LIMIT {
                                memo.clear();
                            }
                            memo.insert(key, values.clone());
                        }
                        values
                    }
                };
                for (i, holds) in values.iter() {
                    if let Some((_, _, id, _)) = rest.get(*i) {
                        self.count(id, holds, &mut tally);
                    }
                }
            }
            // The policies that read the arguments: evaluated now.
            if rest.iter().any(|live| live.3) {
                match self.request_parts(call) {
                    Ok((request, entities)) => {
                        // Cedar's evaluator on each policy, as its
                        // authorizer does (without the partial evaluation
                        // a concrete request has no use for).
                        let evaluator = cedar_policy_core::evaluator::Evaluator::new(
                            request,
                            &entities,
                            Extensions::all_available(),
                        );
                        for (policy, condition, id, _) in rest.iter().filter(|live| live.3) {
                            let holds = evaluate(&evaluator, policy, condition);
                            self.count(id, &holds, &mut tally);
                        }
                    }
                    Err(why) => {
                        return Outcome {
                            decision: Decision::Deny,
                            policies: Vec::new(),
                            reason: Some(why),
                        };
                    }
                }
            }
            return self.finish(tally);
        }
        self.decide_request(call, self.request_parts(call))
    }

    /// The decision on `call` with a request that has no `input` (its
    /// arguments unread): what the policies that read no argument decide.
    pub fn decide_without_input(&self, call: &Call<'_>) -> Outcome {
        self.decide_request(
            call,
            self.bare_request(call).map(|(r, e)| (r, Cow::Owned(e))),
        )
    }

    fn decide_request(
        &self,
        call: &Call<'_>,
        request: Result<(ast::Request, Cow<'_, cedar_policy_core::entities::Entities>), String>,
    ) -> Outcome {
        match request {
            Ok((request, entities)) => self.authorize(call.tool, request, &entities),
            Err(why) => Outcome {
                decision: Decision::Deny,
                policies: Vec::new(),
                reason: Some(why),
            },
        }
    }

    /// Cedar's decision on a request of [`Engine::request`] for a call to
    /// `tool`, as an outcome.
    pub fn authorize(
        &self,
        tool: &str,
        request: ast::Request,
        entities: &cedar_policy_core::entities::Entities,
    ) -> Outcome {
        let set = self.by_tool.get(tool).unwrap_or(&self.policies);
        let response: cedar_policy::Response = self
            .authorizer
            .is_authorized(request, set.as_ref(), entities)
            .into();
        self.outcome(&response)
    }

    /// Adds a policy's value to a tally.
    fn count<'e>(&'e self, id: &PolicyId, holds: &plan::Holds, tally: &mut Tally<'e>) {
        let Some(named) = self.named.get(id) else {
            return;
        };
        match holds {
            plan::Holds::Yes if named.forbid => tally.forbids.push(named),
            plan::Holds::Yes => tally.permits.push(named),
            plan::Holds::Failed(e) if named.forbid => tally.failed.push((named, e.clone())),
            _ => {}
        }
    }

    /// The outcome of Cedar's response over a policy set.
    pub fn outcome(&self, response: &cedar_policy::Response) -> Outcome {
        let mut tally = Tally::default();
        self.tally(response, &mut tally);
        self.finish(tally)
    }

    /// Adds what a response says holds: the forbids of a deny, the permits
    /// of an allow, and the forbids that failed.
    fn tally<'e>(&'e self, response: &cedar_policy::Response, tally: &mut Tally<'e>) {
        for error in response.diagnostics().errors() {
            let cedar_policy::AuthorizationError::PolicyEvaluationError(e) = error;
            if let Some(named) = self.named.get(e.policy_id())
                && named.forbid
            {
                tally.failed.push((named, e.inner().to_string()));
            }
        }
        let holding = response
            .diagnostics()
            .reason()
            .filter_map(|id| self.named.get(id));
        match response.decision() {
            cedar_policy::Decision::Deny => tally.forbids.extend(holding),
            cedar_policy::Decision::Allow => tally.permits.extend(holding),
        }
    }

    /// The outcome of what holds: a forbid that failed refuses (fail
    /// closed), else a forbid denies, else a permit allows (asks when one
    /// asks), else nothing permits.
    fn finish(&self, mut tally: Tally<'_>) -> Outcome {
        if !tally.failed.is_empty() {
            tally.failed.sort_by_key(|(n, _)| n.index);
            let reason = tally
                .failed
                .iter()
                .map(|(n, e)| format!("`{}` could not be evaluated ({e})", n.name))
                .collect::<Vec<_>>()
                .join("; ");
            return Outcome {
                decision: Decision::Deny,
                policies: tally.failed.iter().map(|(n, _)| n.name.clone()).collect(),
                reason: Some(reason),
            };
        }
        let names = |list: &mut Vec<&Named>| -> Vec<String> {
            list.sort_by_key(|n| n.index);
            list.iter()
                .filter(|n| !n.default)
                .map(|n| n.name.clone())
                .collect()
        };
        if !tally.forbids.is_empty() {
            return Outcome {
                decision: Decision::Deny,
                policies: names(&mut tally.forbids),
                reason: None,
            };
        }
        let asks: Vec<&str> = {
            tally.permits.sort_by_key(|n| n.index);
            tally
                .permits
                .iter()
                .filter_map(|n| n.ask.as_deref())
                .collect()
        };
        let decision = match (tally.permits.is_empty(), asks.is_empty()) {
            (true, _) => Decision::Deny,
            (false, true) => Decision::Allow,
            (false, false) => Decision::Ask,
        };
        let reason = (!asks.is_empty()).then(|| asks.join("; "));
        Outcome {
            decision,
            policies: names(&mut tally.permits),
            reason,
        }
    }
}

/// What holds on a call: satisfied forbids and permits, and forbids whose
/// evaluation failed.
#[derive(Default)]
struct Tally<'e> {
    forbids: Vec<&'e Named>,
    permits: Vec<&'e Named>,
    failed: Vec<(&'e Named, String)>,
}

/// Cedar's evaluator on one policy's condition.
fn evaluate(
    evaluator: &cedar_policy_core::evaluator::Evaluator<'_>,
    policy: &ast::Policy,
    condition: &ast::Expr,
) -> plan::Holds {
    match evaluator.interpret(condition, policy.env()) {
        Ok(v) => match v.value_kind() {
            ast::ValueKind::Lit(ast::Literal::Bool(true)) => plan::Holds::Yes,
            ast::ValueKind::Lit(ast::Literal::Bool(false)) => plan::Holds::No,
            _ => plan::Holds::Failed("the condition is not a boolean".into()),
        },
        Err(e) => plan::Holds::Failed(e.to_string()),
    }
}

/// `NS::kind`, as an entity type.
fn entity_type(namespace: &str, kind: &str) -> Result<ast::EntityType, String> {
    let name: ast::Name = format!("{namespace}::{kind}")
        .parse()
        .map_err(|e: cedar_policy_core::parser::err::ParseErrors| e.to_string())?;
    Ok(ast::EntityType::from(name))
}

fn uid(kind: &ast::EntityType, id: &str) -> EntityUID {
    EntityUID::from_components(kind.clone(), ast::Eid::new(id), None)
}
