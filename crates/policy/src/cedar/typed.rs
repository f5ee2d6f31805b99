//! The arguments of a call as Cedar values, guided by the schema's type of
//! the tool's `context.input`, for the types whose encoding is plain:
//! strings, longs, booleans, sets, records and enumerated entities. A call
//! whose arguments need more (cedar-for-agents' opaque `Number`, `Float`
//! and `Null` entities, tagged entities, unions, extension values) is left
//! to cedar-for-agents' own request generator. Both give the same request
//! (a test holds them to it); this one skips re-reading the arguments from
//! text and re-validating the request against the schema, which the
//! conversion already follows type by type.

use cedar_policy_core::ast::{Eid, EntityUID, RestrictedExpr};
use cedar_policy_core::validator::types::{EntityKind, Type};
use cedar_policy_core::validator::{ValidatorEntityTypeKind, ValidatorSchema};
use serde_json::Value;

/// `value` as a Cedar value of type `ty`, or `None` when the plain
/// encodings do not cover it.
pub(crate) fn convert(
    schema: &ValidatorSchema,
    ty: &Type,
    value: &Value,
) -> Option<RestrictedExpr> {
    match (ty, value) {
        (Type::Bool(_), Value::Bool(b)) => Some(RestrictedExpr::val(*b)),
        (Type::Long, Value::Number(n)) => n.as_i64().map(RestrictedExpr::val),
        (Type::String, Value::String(s)) => Some(RestrictedExpr::val(s.as_str())),
        (
            Type::Set {
                element_type: Some(element),
            },
            Value::Array(items),
        ) => items
            .iter()
            .map(|item| convert(schema, element, item))
            .collect::<Option<Vec<_>>>()
            .map(RestrictedExpr::set),
        (Type::Record { attrs, .. }, Value::Object(map)) => {
            if map.keys().any(|k| attrs.get_attr(k).is_none()) {
                return None;
            }
            let mut pairs = Vec::with_capacity(map.len());
            for (name, attr) in attrs.iter() {
                match map.get(name.as_str()) {
                    Some(v) => pairs.push((name.clone(), convert(schema, &attr.attr_type, v)?)),
                    None if attr.is_required => return None,
                    None => {}
                }
            }
            RestrictedExpr::record(pairs).ok()
        }
        (Type::Entity(EntityKind::Entity(lub)), Value::String(s)) => {
            let kind = lub.get_single_entity()?;
            let declared = schema.get_entity_type(kind)?;
            match &declared.kind {
                ValidatorEntityTypeKind::Enum(choices)
                    if choices.iter().any(|c| c.as_ref() == s.as_str()) =>
                {
                    Some(RestrictedExpr::val(EntityUID::from_components(
                        kind.clone(),
                        Eid::new(s.as_str()),
                        None,
                    )))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The type of `context.input` of an action, if it has one.
pub(crate) fn input_type<'s>(schema: &'s ValidatorSchema, action: &EntityUID) -> Option<&'s Type> {
    match schema.get_action_id(action)?.context_type()? {
        Type::Record { attrs, .. } => attrs.get_attr("input").map(|a| a.attr_type.as_ref()),
        _ => None,
    }
}
