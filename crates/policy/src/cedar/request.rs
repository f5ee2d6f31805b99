//! The Cedar request of a call: principal, action, resource and the
//! `input`, `resolution` and `session` records, built by the plain-type
//! shortcut or cedar-for-agents' generator; and the same request as Cedar's
//! CLI reads it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use cedar_policy_core::ast::{self, EntityUID, RestrictedExpr};
use cedar_policy_core::extensions::Extensions;
use serde_json::Value;
use smol_str::SmolStr;

use super::{CedarError, Engine, schema, typed, uid};
use crate::Call;

impl Engine {
    /// The principal of a call.
    pub(super) fn principal_of(&self, call: &Call<'_>) -> EntityUID {
        match call.principal.and_then(|p| p.sub.as_deref()) {
            Some(sub) => uid(&self.user, sub),
            None => self.principal.clone(),
        }
    }

    /// The `resolution` and `session` records of a call.
    pub(super) fn context(&self, call: &Call<'_>) -> [(SmolStr, RestrictedExpr); 2] {
        let mut resolution: Vec<(SmolStr, RestrictedExpr)> =
            Vec::with_capacity(self.hints.len() + 3);
        if let Some(variant) = call.variant {
            resolution.push(("variant".into(), RestrictedExpr::val(variant)));
        }
        resolution.push(("described".into(), RestrictedExpr::val(call.described)));
        resolution.push((
            "requiredScopes".into(),
            RestrictedExpr::set(call.scopes.iter().map(|s| RestrictedExpr::val(s.as_str()))),
        ));
        for hint in &self.hints {
            let value = call.annotations.get(hint).unwrap_or(false);
            resolution.push((hint.clone(), RestrictedExpr::val(value)));
        }
        let mut session: Vec<(SmolStr, RestrictedExpr)> = Vec::with_capacity(4);
        let facts = call.session;
        if let Some(v) = facts.and_then(|f| f.protocol_version.as_deref()) {
            session.push(("protocolVersion".into(), RestrictedExpr::val(v)));
        }
        if let Some(v) = facts.and_then(|f| f.client_name.as_deref()) {
            session.push(("clientName".into(), RestrictedExpr::val(v)));
        }
        if let Some(v) = call.principal.and_then(|p| p.client_id.as_deref()) {
            session.push(("tokenClient".into(), RestrictedExpr::val(v)));
        }
        session.push((
            "tokenScopes".into(),
            RestrictedExpr::set(
                call.principal
                    .into_iter()
                    .flat_map(|p| p.scopes.iter())
                    .map(|s| RestrictedExpr::val(s.as_str())),
            ),
        ));
        [
            ("resolution".into(), record(resolution)),
            ("session".into(), record(session)),
        ]
    }

    /// The `resolution` and `session` records of a call, as values.
    pub(super) fn context_values(&self, call: &Call<'_>) -> [(SmolStr, ast::Value); 2] {
        let string = |s: &str| ast::Value::new(ast::Literal::String(s.into()), None);
        let boolean = |b: bool| ast::Value::new(ast::Literal::Bool(b), None);
        let mut resolution: BTreeMap<SmolStr, ast::Value> = BTreeMap::new();
        if let Some(variant) = call.variant {
            resolution.insert("variant".into(), string(variant));
        }
        resolution.insert("described".into(), boolean(call.described));
        resolution.insert(
            "requiredScopes".into(),
            ast::Value::set(call.scopes.iter().map(|s| string(s)), None),
        );
        for hint in &self.hints {
            resolution.insert(
                hint.clone(),
                boolean(call.annotations.get(hint).unwrap_or(false)),
            );
        }
        let mut session: BTreeMap<SmolStr, ast::Value> = BTreeMap::new();
        let facts = call.session;
        if let Some(v) = facts.and_then(|f| f.protocol_version.as_deref()) {
            session.insert("protocolVersion".into(), string(v));
        }
        if let Some(v) = facts.and_then(|f| f.client_name.as_deref()) {
            session.insert("clientName".into(), string(v));
        }
        if let Some(v) = call.principal.and_then(|p| p.client_id.as_deref()) {
            session.insert("tokenClient".into(), string(v));
        }
        session.insert(
            "tokenScopes".into(),
            ast::Value::set(
                call.principal
                    .into_iter()
                    .flat_map(|p| p.scopes.iter())
                    .map(|s| string(s)),
                None,
            ),
        );
        [
            (
                "resolution".into(),
                ast::Value::record_arc(Arc::new(resolution), None),
            ),
            (
                "session".into(),
                ast::Value::record_arc(Arc::new(session), None),
            ),
        ]
    }

    /// A request of already-evaluated parts.
    pub(super) fn request_of(
        &self,
        principal: EntityUID,
        action: EntityUID,
        context: BTreeMap<SmolStr, ast::Value>,
    ) -> Result<ast::Request, String> {
        ast::Request::new(
            (principal, None),
            (action, None),
            (self.resource.clone(), None),
            ast::Context::Value(Arc::new(context)),
            None::<&ast::RequestSchemaAllPass>,
            Extensions::all_available(),
        )
        .map_err(|e| e.to_string())
    }

    /// The Cedar request of a call, and the entities it is decided with.
    pub fn request(
        &self,
        call: &Call<'_>,
    ) -> Result<(ast::Request, cedar_policy_core::entities::Entities), CedarError> {
        let (request, entities) = self.request_parts(call).map_err(CedarError::Request)?;
        Ok((request, entities.into_owned()))
    }

    /// [`Engine::request`], with the schema's action entities borrowed
    /// when the call adds none.
    pub(super) fn request_parts(
        &self,
        call: &Call<'_>,
    ) -> Result<(ast::Request, Cow<'_, cedar_policy_core::entities::Entities>), String> {
        let untyped = self.schema.untyped.iter().any(|(t, _)| t == call.tool);
        if !self.schema.tools.contains(call.tool) || untyped {
            return self.bare_request(call).map(|(r, e)| (r, Cow::Owned(e)));
        }
        let empty = Value::Object(Default::default());
        let arguments = call.arguments.unwrap_or(&empty);
        let principal = self.principal_of(call);
        let action = uid(&self.action, call.tool);
        let schema: &cedar_policy_core::validator::ValidatorSchema = self.schema.schema.as_ref();
        if let Some(input) =
            typed::input_type(schema, &action).and_then(|ty| typed::convert(schema, ty, arguments))
        {
            let mut context: BTreeMap<SmolStr, ast::Value> =
                self.context_values(call).into_iter().collect();
            context.insert("input".into(), input);
            let request = self.request_of(principal, action, context)?;
            return Ok((request, Cow::Borrowed(&self.actions)));
        }
        self.generated_request(call, principal, arguments)
            .map(|(r, e)| (r, Cow::Owned(e)))
    }

    /// The request cedar-for-agents' generator makes of a call.
    pub(super) fn generated_request(
        &self,
        call: &Call<'_>,
        principal: EntityUID,
        arguments: &Value,
    ) -> Result<(ast::Request, cedar_policy_core::entities::Entities), String> {
        let context = self.context(call);
        let text =
            serde_json::json!({"params": {"name": call.tool, "arguments": arguments}}).to_string();
        let input = mcp_tools_sdk::data::Input::from_json_str(&text)
            .map_err(|e| format!("the arguments cannot be read as Cedar values: {e}"))?;
        self.schema
            .requests
            .generate_request(
                principal,
                self.resource.clone(),
                context,
                self.actions.clone(),
                &input,
                None,
            )
            .map_err(|e| format!("the arguments cannot be put to the policies: {e}"))
    }

    /// Whether a call's arguments take the plain-type shortcut (all of
    /// them strings, longs, booleans, sets, records or enumerated values).
    pub fn plain(&self, call: &Call<'_>) -> bool {
        let empty = Value::Object(Default::default());
        let schema: &cedar_policy_core::validator::ValidatorSchema = self.schema.schema.as_ref();
        typed::input_type(schema, &uid(&self.action, call.tool))
            .and_then(|ty| typed::convert(schema, ty, call.arguments.unwrap_or(&empty)))
            .is_some()
    }

    /// The request cedar-for-agents' generator makes of a call (what
    /// [`Engine::request`] makes, without its plain-type shortcut): for
    /// holding the two to the same requests.
    pub fn generated(
        &self,
        call: &Call<'_>,
    ) -> Result<(ast::Request, cedar_policy_core::entities::Entities), CedarError> {
        let empty = Value::Object(Default::default());
        self.generated_request(
            call,
            self.principal_of(call),
            call.arguments.unwrap_or(&empty),
        )
        .map_err(CedarError::Request)
    }

    /// The request of a call without `input`: a tool the rules do not
    /// describe (its action is put in `call_tool`), or a row of a decision
    /// table.
    pub(crate) fn bare_request(
        &self,
        call: &Call<'_>,
    ) -> Result<(ast::Request, cedar_policy_core::entities::Entities), String> {
        let principal = self.principal_of(call);
        let context = self.context(call);
        let action = uid(&self.action, call.tool);
        let entities = if self.schema.tools.contains(call.tool) {
            self.actions.clone()
        } else {
            let group = uid(&self.action, schema::CALL_TOOL);
            let entity = ast::Entity::new_with_attr_partial_value(
                action.clone(),
                [],
                Default::default(),
                [group].into_iter().collect(),
                [],
            );
            self.actions
                .clone()
                .add_entities(
                    [Arc::new(entity)],
                    None::<&cedar_policy_core::validator::CoreSchema<'_>>,
                    cedar_policy_core::entities::TCComputation::ComputeNow,
                    Extensions::all_available(),
                )
                .map_err(|e| e.to_string())?
        };
        let context = ast::Context::from_pairs(context, Extensions::all_available())
            .map_err(|e| e.to_string())?;
        let request = ast::Request::new(
            (principal, None),
            (action, None),
            (self.resource.clone(), None),
            context,
            None::<&ast::RequestSchemaAllPass>,
            Extensions::all_available(),
        )
        .map_err(|e| e.to_string())?;
        Ok((request, entities))
    }

    /// The request of `call` as Cedar's CLI reads it (`--request-json`),
    /// and its entities (`--entities`) without the schema's action
    /// entities (the CLI adds those from `--schema`): for checking a
    /// decision with an independent evaluator.
    pub fn cli_request(&self, call: &Call<'_>) -> Result<(Value, Value), CedarError> {
        self.cli_request_text(call).map_err(CedarError::Request)
    }

    fn cli_request_text(&self, call: &Call<'_>) -> Result<(Value, Value), String> {
        let (request, entities) = self.request_parts(call)?;
        let entities = entities.into_owned();
        let part = |entry: &ast::EntityUIDEntry| -> Value {
            match entry {
                ast::EntityUIDEntry::Known { euid, .. } => Value::String(euid.to_string()),
                _ => Value::Null,
            }
        };
        let context = match request.context() {
            Some(c) => c.to_json_value().map_err(|e| e.to_string())?,
            None => Value::Null,
        };
        let json = serde_json::json!({
            "principal": part(request.principal()),
            "action": part(request.action()),
            "resource": part(request.resource()),
            "context": context,
        });
        let entities = cedar_policy::Entities::from(entities)
            .to_json_value()
            .map_err(|e| e.to_string())?;
        let entities = match entities {
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .filter(|e| {
                        e.pointer("/uid/type")
                            .and_then(Value::as_str)
                            .is_none_or(|t| !t.ends_with("::Action"))
                    })
                    .collect(),
            ),
            other => other,
        };
        Ok((json, entities))
    }
}

pub(super) fn record(pairs: Vec<(SmolStr, RestrictedExpr)>) -> RestrictedExpr {
    // Keys are distinct by construction, so this never fails; an empty
    // record if it did (which no policy's access could read).
    let empty = RestrictedExpr::val(false);
    RestrictedExpr::record(pairs).unwrap_or(empty)
}
