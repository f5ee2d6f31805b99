//! Front ends: text to AST with spans.
pub mod decode;
pub mod dsl;
pub mod expr;
pub(crate) mod grammar;
pub mod tree;
pub mod yaml;
pub mod yaml_fast;

/// The shape MCP's `Tool` gives a member that rules files carry verbatim
/// (`outputSchema`, `icons`, `execution`, `_meta`): `Err` says what is wrong.
pub fn check_tool_member(name: &str, value: &serde_json::Value) -> Result<(), String> {
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
        _ => Ok(()),
    }
}
