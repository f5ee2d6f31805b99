//! Front ends: text to AST with spans.
pub mod decode;
pub mod dsl;
pub mod expr;
pub(crate) mod grammar;
pub mod tree;
pub mod yaml;
pub mod yaml_fast;

/// The shape MCP's `Tool` gives a member that rules files carry verbatim
/// (`outputSchema`, `icons`, `execution`, `_meta`, and `trust`, SEP-3140's
/// labels): `Err` says what is wrong.
pub(crate) fn check_tool_member(name: &str, value: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value;
    match name {
        "outputSchema" => match value {
            // `check` compiles it (`invalid-schema`).
            Value::Object(_) => Ok(()),
            _ => Err("`outputSchema` must be a JSON Schema object".into()),
        },
        "icons" => {
            let Value::Array(items) = value else {
                return Err("`icons` must be a sequence of icons".into());
            };
            for (i, icon) in items.iter().enumerate() {
                let Value::Object(icon) = icon else {
                    return Err(format!("`icons[{i}]` must be a mapping with `src`"));
                };
                if !icon.get("src").is_some_and(Value::is_string) {
                    return Err(format!("`icons[{i}]` needs a string `src`"));
                }
                for key in ["mimeType", "theme"] {
                    if icon.get(key).is_some_and(|v| !v.is_string()) {
                        return Err(format!("`icons[{i}].{key}` must be a string"));
                    }
                }
                if let Some(sizes) = icon.get("sizes")
                    && !sizes
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_string))
                {
                    return Err(format!("`icons[{i}].sizes` must be a sequence of strings"));
                }
            }
            Ok(())
        }
        "execution" => {
            let Value::Object(m) = value else {
                return Err("`execution` must be a mapping".into());
            };
            match m.get("taskSupport") {
                None => Ok(()),
                Some(Value::String(s))
                    if ["forbidden", "optional", "required"].contains(&s.as_str()) =>
                {
                    Ok(())
                }
                Some(_) => {
                    Err("`execution.taskSupport` is `forbidden`, `optional` or `required`".into())
                }
            }
        }
        "_meta" => match value {
            Value::Object(_) => Ok(()),
            _ => Err("`_meta` must be a mapping".into()),
        },
        "trust" => check_trust(value),
        _ => Ok(()),
    }
}

/// `trust`: the SEP-3140 labels no MCP hint carries. The vocabularies are
/// closed, so a value outside them is an error here rather than a label a
/// host would read as the most restrictive.
fn check_trust(value: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value;
    let Value::Object(map) = value else {
        return Err("`trust` must be a mapping (`dataSensitivity`, `reversible`, `egress`)".into());
    };
    for (key, value) in map {
        let allowed: &[&str] = match key.as_str() {
            "dataSensitivity" => &["public", "internal", "confidential", "secret"],
            "egress" => &["internal", "external"],
            "reversible" => {
                if value.is_boolean() {
                    continue;
                }
                return Err("`trust.reversible` must be `true` or `false`".into());
            }
            "effect" | "idempotent" => {
                return Err(format!(
                    "`trust.{key}` comes from the tool's annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`); set those instead"
                ));
            }
            _ => {
                return Err(format!(
                    "`trust` has no `{key}`: it takes `dataSensitivity`, `reversible` and `egress`"
                ));
            }
        };
        if !value.as_str().is_some_and(|v| allowed.contains(&v)) {
            let list: Vec<String> = allowed.iter().map(|v| format!("`{v}`")).collect();
            return Err(format!("`trust.{key}` is one of {}", list.join(", ")));
        }
    }
    Ok(())
}
