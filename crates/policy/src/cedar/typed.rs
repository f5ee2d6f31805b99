//! The arguments of a call as Cedar values, guided by the schema's type of
//! the tool's `context.input`, for the types whose encoding is plain:
//! strings, longs, booleans, sets, records and enumerated entities. A call
//! whose arguments need more (cedar-for-agents' opaque `Number`, `Float`
//! and `Null` entities, tagged entities, unions, extension values) is left
//! to cedar-for-agents' own request generator. Both give the same request
//! (a test holds them to it); this one skips re-reading the arguments from
//! text and re-validating the request against the schema, which the
//! conversion already follows type by type.

use std::sync::Arc;

use cedar_policy_core::ast::{Eid, EntityUID, Literal, Value as CedarValue};
use cedar_policy_core::validator::types::{EntityKind, Type};
use cedar_policy_core::validator::{ValidatorEntityTypeKind, ValidatorSchema};
use serde_json::Value;

/// `value` as a Cedar value of type `ty`, or `None` when the plain
/// encodings do not cover it.
pub(crate) fn convert(schema: &ValidatorSchema, ty: &Type, value: &Value) -> Option<CedarValue> {
    match (ty, value) {
        (Type::Bool(_), Value::Bool(b)) => Some(CedarValue::new(Literal::Bool(*b), None)),
        (Type::Long, Value::Number(n)) => {
            n.as_i64().map(|i| CedarValue::new(Literal::Long(i), None))
        }
        (Type::String, Value::String(s)) => {
            Some(CedarValue::new(Literal::String(s.as_str().into()), None))
        }
        (
            Type::Set {
                element_type: Some(element),
            },
            Value::Array(items),
        ) => items
            .iter()
            .map(|item| convert(schema, element, item))
            .collect::<Option<Vec<_>>>()
            .map(|items| CedarValue::set(items, None)),
        (Type::Record { attrs, .. }, Value::Object(map)) => {
            if map.keys().any(|k| attrs.get_attr(k).is_none()) {
                return None;
            }
            let mut pairs = std::collections::BTreeMap::new();
            for (name, attr) in attrs.iter() {
                match map.get(name.as_str()) {
                    Some(v) => {
                        pairs.insert(name.clone(), convert(schema, &attr.attr_type, v)?);
                    }
                    None if attr.is_required => return None,
                    None => {}
                }
            }
            Some(CedarValue::record_arc(Arc::new(pairs), None))
        }
        (Type::Entity(EntityKind::Entity(lub)), Value::String(s)) => {
            let kind = lub.get_single_entity()?;
            let declared = schema.get_entity_type(kind)?;
            match &declared.kind {
                ValidatorEntityTypeKind::Enum(choices)
                    if choices.iter().any(|c| c.as_ref() == s.as_str()) =>
                {
                    Some(CedarValue::new(
                        Literal::EntityUID(Arc::new(EntityUID::from_components(
                            kind.clone(),
                            Eid::new(s.as_str()),
                            None,
                        ))),
                        None,
                    ))
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
