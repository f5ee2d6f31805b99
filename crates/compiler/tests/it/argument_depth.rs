//! The nesting limit on arguments, with and without the schema's proof that
//! it holds: `ArgumentValidator` skips its check before validation when
//! `schema_bounds_depth` proves the schema refuses anything deeper, and the
//! answer — accepted, refused for nesting, refused by the schema — must be
//! exactly the one the check in front of the validator gives.

use std::cell::Cell;

use mcp_resolve_runtime::pattern::schema_validator_options;
use mcp_resolve_runtime::{ArgumentValidator, MAX_ARGUMENT_DEPTH, schema_bounds_depth};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

/// How many levels `value` has (a scalar is one).
fn levels(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(levels).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(levels).max().unwrap_or(0),
        _ => 1,
    }
}

/// What a validator must answer: the nesting check, then the schema.
fn reference(validator: &jsonschema::Validator, arguments: &Value) -> Result<(), &'static str> {
    if !arguments.is_object() {
        return Err("not an object");
    }
    if levels(arguments) > MAX_ARGUMENT_DEPTH {
        return Err("nests too deep");
    }
    if validator.is_valid(arguments) {
        Ok(())
    } else {
        Err("refused by the schema")
    }
}

fn answer(validator: &ArgumentValidator, arguments: &Value) -> Result<(), &'static str> {
    match validator.validate_object("t", arguments) {
        Ok(_) => Ok(()),
        Err(e) if e.message.contains("must be an object") => Err("not an object"),
        Err(e) if e.message.contains("nest deeper") => Err("nests too deep"),
        Err(_) => Err("refused by the schema"),
    }
}

/// `n` levels of `wrap` around `inner`.
fn nest(n: usize, inner: Value, array: bool) -> Value {
    (0..n).fold(
        inner,
        |v, _| if array { json!([v]) } else { json!({"a": v}) },
    )
}

fn scalar_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": ["integer", "null"]})),
        Just(json!({"enum": [1, "x", [1, [2]], {"a": {"a": 1}}]})),
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    let leaf = scalar_schema();
    let tree = leaf.prop_recursive(6, 48, 4, |inner| {
        let additional = prop_oneof![
            Just(None),
            Just(Some(json!(false))),
            inner.clone().prop_map(Some),
        ];
        prop_oneof![
            (
                prop::collection::btree_map(prop_oneof![Just("a"), Just("b")], inner.clone(), 0..3),
                additional,
                any::<bool>(),
            )
                .prop_map(|(props, additional, typed)| {
                    let mut s = json!({"properties": props});
                    if let Some(a) = additional {
                        s["additionalProperties"] = a;
                    }
                    if typed {
                        s["type"] = json!("object");
                    }
                    s
                }),
            (
                inner.clone(),
                prop::option::of(inner.clone()),
                any::<bool>()
            )
                .prop_map(|(items, prefix, unique)| {
                    let mut s = json!({"type": "array", "items": items});
                    if let Some(p) = prefix {
                        s["prefixItems"] = json!([p]);
                    }
                    if unique {
                        s["uniqueItems"] = json!(true);
                    }
                    s
                }),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|s| json!({"anyOf": s})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|s| json!({"allOf": s})),
            prop::collection::vec(inner, 1..3).prop_map(|s| json!({"oneOf": s})),
        ]
    });
    // Chains of closed objects or arrays around the limit, so that deep
    // arguments the schema accepts are common.
    let chain = (
        tree.clone(),
        (MAX_ARGUMENT_DEPTH - 3)..(MAX_ARGUMENT_DEPTH + 3),
        any::<bool>(),
    )
        .prop_map(|(leaf, n, array)| {
            (0..n).fold(leaf, |inner, _| {
                if array {
                    json!({"type": "array", "items": inner})
                } else {
                    json!({"type": "object", "properties": {"a": inner}, "additionalProperties": false})
                }
            })
        });
    prop_oneof![tree, chain].prop_map(
        |s| json!({"type": "object", "properties": {"a": s}, "additionalProperties": false}),
    )
}

/// A chain of closed objects or of arrays around a leaf, and arguments of
/// the same shape, as deep or a level or two off: the cases where a bound
/// one level wrong would show.
fn aligned() -> impl Strategy<Value = (Value, Vec<Value>)> {
    let leaves = prop_oneof![
        Just((json!({"type": "string"}), json!("x"))),
        Just((json!({"enum": [1, [1, [2]]]}), json!([1, [2]]))),
        Just((json!({"type": ["integer", "null"]}), Value::Null)),
        Just((json!(true), json!({"a": {"a": 1}}))),
        Just((
            json!({"type": "object", "additionalProperties": false, "properties": {"b": {"type": "string"}}}),
            json!({"b": "x"}),
        )),
    ];
    (
        leaves,
        (MAX_ARGUMENT_DEPTH - 6)..(MAX_ARGUMENT_DEPTH + 2),
        any::<bool>(),
    )
        .prop_map(|((leaf, leaf_value), n, array)| {
            let schema = (0..n).fold(leaf, |inner, _| {
                if array {
                    json!({"type": "array", "items": inner})
                } else {
                    json!({"type": "object", "properties": {"a": inner}, "additionalProperties": false})
                }
            });
            let schema =
                json!({"type": "object", "properties": {"a": schema}, "additionalProperties": false});
            let values = (n.saturating_sub(2)..n + 3)
                .map(|m| json!({"a": nest(m, leaf_value.clone(), array)}))
                .collect();
            (schema, values)
        })
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(1)),
        Just(json!("x")),
        Just(Value::Null),
        Just(json!([1, [2]])),
        Just(json!({"a": {"a": 1}})),
    ];
    let tree = leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![Just("a".to_string()), Just("b".to_string())],
                inner,
                0..3
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    // Around the limit, in objects or arrays.
    let deep = (
        tree.clone(),
        (MAX_ARGUMENT_DEPTH - 5)..(MAX_ARGUMENT_DEPTH + 3),
        any::<bool>(),
    )
        .prop_map(|(inner, n, array)| nest(n, inner, array));
    prop_oneof![tree, deep].prop_map(|v| json!({"a": v}))
}

#[test]
fn the_answer_is_the_checks_whether_or_not_the_schema_bounds_the_depth() {
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    // How often the cases reach what the property is about.
    let bounded = Cell::new(0);
    let deep_refused_by_bounded = Cell::new(0);
    let cases = prop_oneof![(schema(), prop::collection::vec(value(), 1..5)), aligned(),];
    let outcome = runner.run(&cases, |(schema, values)| {
        let reference_validator = schema_validator_options().build(&schema).unwrap();
        let validator = ArgumentValidator::new(&schema).unwrap();
        let is_bounded = schema_bounds_depth(&schema);
        bounded.set(bounded.get() + usize::from(is_bounded));
        for v in &values {
            let expected = reference(&reference_validator, v);
            prop_assert_eq!(answer(&validator, v), expected, "{} against {}", v, schema);
            prop_assert_eq!(validator.is_valid(v), expected.is_ok());
            if is_bounded {
                // What the proof claims: nothing deeper is accepted.
                prop_assert!(!reference_validator.is_valid(v) || levels(v) <= MAX_ARGUMENT_DEPTH);
                let deep = expected == Err("nests too deep");
                deep_refused_by_bounded.set(deep_refused_by_bounded.get() + usize::from(deep));
            }
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    let (bounded, deep) = (bounded.get(), deep_refused_by_bounded.get());
    eprintln!("{bounded} bounded schemas, {deep} deep arguments refused by one");
    assert!(bounded > 200, "{bounded} bounded schemas of 2000");
    assert!(
        deep > 50,
        "{deep} deep arguments refused by a bounded schema"
    );
}

#[test]
fn arguments_that_are_not_objects_are_refused_first() {
    let validator =
        ArgumentValidator::new(&json!({"type": "object", "additionalProperties": false})).unwrap();
    for v in [json!([]), json!(1), Value::Null, nest(100, json!(1), true)] {
        assert_eq!(answer(&validator, &v), Err("not an object"));
    }
}
