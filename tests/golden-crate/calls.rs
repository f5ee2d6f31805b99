//! Random arguments for the rule sets of `random_rules.rs`: absent,
//! wrong-typed and boundary values included. Shared by the differential
//! tests (`tests/differential.rs`, `tests/typescript.rs`).

use crate::random_rules::{INTEGERS, NUMBERS, Rng, STRINGS};
use serde_json::{Map, Value, json};

const EXTRA_STRINGS: &[&str] = &[
    "/tmp/x",
    "/tmp/",
    "x.md",
    ".md",
    "aa",
    "12",
    "123",
    "READ me",
    "read ",
    "é.md",
    "abcdefghijklmnop",
    "d\"",
    "\u{0}",
];

fn number(rng: &mut Rng) -> Value {
    match rng.below(10) {
        0 => json!(i64::MAX),
        1 => json!(u64::MAX),
        2 => json!(i64::MIN),
        3 => {
            let n: f64 = rng.pick(NUMBERS).parse().unwrap();
            json!(n + [0.5, -0.5, 1.0, -1.0][rng.below(4)])
        }
        4 | 5 => {
            let n: f64 = rng.pick(NUMBERS).parse().unwrap();
            json!(n)
        }
        _ => {
            let n: i64 = rng.pick(INTEGERS).parse().unwrap();
            json!(n + [0i64, 0, 1, -1][rng.below(4)])
        }
    }
}

fn any_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 2 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(2)),
        2 => number(rng),
        3 | 4 => string(rng),
        5 => json!([any_value(rng, depth + 1)]),
        _ => {
            let mut m = Map::new();
            m.insert("depth".into(), any_value(rng, depth + 1));
            Value::Object(m)
        }
    }
}

fn string(rng: &mut Rng) -> Value {
    if rng.chance(3) {
        Value::String(rng.pick(EXTRA_STRINGS).to_string())
    } else {
        Value::String(rng.pick(STRINGS).to_string())
    }
}

fn typed(rng: &mut Rng, ty: &str) -> Value {
    if rng.chance(16) {
        return any_value(rng, 0);
    }
    match ty {
        "string" => string(rng),
        "integer" => {
            let n: i64 = rng.pick(INTEGERS).parse().unwrap();
            json!(n + [0i64, 1, -1][rng.below(3)])
        }
        "number" => number(rng),
        "boolean" => Value::Bool(rng.chance(2)),
        _ => any_value(rng, 0),
    }
}

pub fn arguments(rng: &mut Rng, schema: &Value) -> Value {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let include = |rng: &mut Rng, name: &str| {
        if required.contains(&name) {
            !rng.chance(16)
        } else {
            rng.chance(2)
        }
    };
    let mut m = Map::new();
    for (name, ty) in [
        ("mode", "string"),
        ("path", "string"),
        ("count", "integer"),
        ("ratio", "number"),
        ("flag", "boolean"),
        ("any", "any"),
    ] {
        if include(rng, name) {
            m.insert(name.into(), typed(rng, ty));
        }
    }
    if include(rng, "opts") {
        let opts = if rng.chance(6) {
            any_value(rng, 1)
        } else {
            let mut o = Map::new();
            if rng.chance(2) {
                let v = if rng.chance(2) {
                    typed(rng, "integer")
                } else {
                    typed(rng, "string")
                };
                o.insert("depth".into(), v);
            }
            if rng.chance(2) {
                o.insert("force".into(), typed(rng, "boolean"));
            }
            Value::Object(o)
        };
        m.insert("opts".into(), opts);
    }
    if include(rng, "tags") {
        let tags = if rng.chance(8) {
            any_value(rng, 1)
        } else {
            Value::Array((0..rng.below(4)).map(|_| typed(rng, "string")).collect())
        };
        m.insert("tags".into(), tags);
    }
    if include(rng, "edits") {
        let edits = (0..rng.below(3))
            .map(|_| {
                let mut o = Map::new();
                if rng.chance(2) {
                    o.insert("depth".into(), typed(rng, "integer"));
                }
                if rng.chance(2) {
                    o.insert("force".into(), typed(rng, "boolean"));
                }
                Value::Object(o)
            })
            .collect();
        m.insert("edits".into(), Value::Array(edits));
    }
    if rng.chance(12) {
        m.insert("extra".into(), json!(1));
    }
    Value::Object(m)
}
