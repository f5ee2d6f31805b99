//! JSON Schema value semantics shared by the library resolver and generated
//! code: numeric comparison by value (exact for integers), `const`/`enum`
//! equality, `type` tests and string lengths in characters.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A JSON number, in the representation `serde_json` holds it in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// An integer that fits `i64`.
    Int(i64),
    /// An integer above `i64::MAX`.
    UInt(u64),
    /// Anything else.
    Float(f64),
}

impl Num {
    /// The representation of a `serde_json` number.
    pub fn of(n: &Number) -> Num {
        if let Some(i) = n.as_i64() {
            Num::Int(i)
        } else if let Some(u) = n.as_u64() {
            Num::UInt(u)
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// Compares two numbers by value: integers exactly (beyond `f64`
    /// precision), everything else as `f64`. `None` only for NaN.
    pub fn compare(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (Num::UInt(a), Num::UInt(b)) => Some(a.cmp(&b)),
            // A `UInt` is above every `i64`.
            (Num::UInt(_), Num::Int(_)) => Some(Ordering::Greater),
            (Num::Int(_), Num::UInt(_)) => Some(Ordering::Less),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::UInt(u) => u as f64,
            Num::Float(f) => f,
        }
    }
}

/// Compares two JSON numbers by value.
pub fn compare_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    Num::of(a).compare(Num::of(b))
}

/// How `value` compares with `bound`, when it is a number.
fn number_cmp(value: &Value, bound: Num) -> Option<Ordering> {
    match value {
        Value::Number(n) => Num::of(n).compare(bound),
        _ => None,
    }
}

/// `minimum`: numbers at least `bound`; other values pass.
pub fn minimum(value: &Value, bound: Num) -> bool {
    !value.is_number() || number_cmp(value, bound).is_some_and(Ordering::is_ge)
}

/// `maximum`: numbers at most `bound`; other values pass.
pub fn maximum(value: &Value, bound: Num) -> bool {
    !value.is_number() || number_cmp(value, bound).is_some_and(Ordering::is_le)
}

/// `exclusiveMinimum`: numbers above `bound`; other values pass.
pub fn exclusive_minimum(value: &Value, bound: Num) -> bool {
    !value.is_number() || number_cmp(value, bound).is_some_and(Ordering::is_gt)
}

/// `exclusiveMaximum`: numbers below `bound`; other values pass.
pub fn exclusive_maximum(value: &Value, bound: Num) -> bool {
    !value.is_number() || number_cmp(value, bound).is_some_and(Ordering::is_lt)
}

/// Whether `value` is a number equal to `n` by value (`1 == 1.0`).
pub fn number_equals(value: &Value, n: Num) -> bool {
    number_cmp(value, n) == Some(Ordering::Equal)
}

/// JSON Schema equality: numbers by value, arrays element-wise, objects by
/// key set and values.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// JSON Schema's `integer`: any number with a zero fraction.
pub fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// JSON Schema's `type` test for one type name.
pub fn has_type(value: &Value, t: &str) -> bool {
    match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => is_integer(value),
        _ => false,
    }
}

/// The text of an argument that is a string: `None` when it is absent or
/// not a string.
#[inline]
pub fn as_str(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str)
}

/// A literal `pattern` anchored at both ends (`^text$`): strings equal to
/// `text`; other values pass.
#[inline]
pub fn str_is(value: &Value, text: &str) -> bool {
    value.as_str().is_none_or(|s| s == text)
}

/// A literal `pattern` anchored at the start (`^text`): strings that start
/// with `text`; other values pass.
#[inline]
pub fn str_starts_with(value: &Value, text: &str) -> bool {
    value.as_str().is_none_or(|s| s.starts_with(text))
}

/// A literal `pattern` anchored at the end (`text$`): strings that end with
/// `text`; other values pass.
#[inline]
pub fn str_ends_with(value: &Value, text: &str) -> bool {
    value.as_str().is_none_or(|s| s.ends_with(text))
}

/// An unanchored literal `pattern`: strings that contain `text`; other
/// values pass.
#[inline]
pub fn str_contains(value: &Value, text: &str) -> bool {
    value.as_str().is_none_or(|s| s.contains(text))
}

/// `required`: objects that have every key; other values pass.
#[inline]
pub fn has_keys(value: &Value, keys: &[&str]) -> bool {
    value
        .as_object()
        .is_none_or(|o| keys.iter().all(|k| o.contains_key(*k)))
}

/// The member `key` of an object found at an argument path (`a.b`): `None`
/// when the value is absent or not an object with that key.
#[inline]
pub fn member<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    value.and_then(|v| v.as_object()).and_then(|o| o.get(key))
}

/// `minLength`: strings of at least `n` characters; other values pass.
pub fn min_length(value: &Value, n: u64) -> bool {
    match value {
        // Every character takes at least one byte.
        Value::String(s) => s.chars().count() as u64 >= n,
        _ => true,
    }
}

/// `maxLength`: strings of at most `n` characters; other values pass.
pub fn max_length(value: &Value, n: u64) -> bool {
    match value {
        Value::String(s) => (s.len() as u64) <= n || s.chars().count() as u64 <= n,
        _ => true,
    }
}

/// `minItems`: arrays of at least `n` items; other values pass.
pub fn min_items(value: &Value, n: u64) -> bool {
    value.as_array().is_none_or(|a| a.len() as u64 >= n)
}

/// `maxItems`: arrays of at most `n` items; other values pass.
pub fn max_items(value: &Value, n: u64) -> bool {
    value.as_array().is_none_or(|a| a.len() as u64 <= n)
}

/// A JSON value known when the code was generated: `const` and `enum`
/// members that are not a plain string, boolean or null.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Num(Num),
    /// A string.
    Str(&'static str),
    /// An array.
    Array(&'static [Const]),
    /// An object, by key.
    Object(&'static [(&'static str, Const)]),
}

impl Const {
    /// Whether `value` equals this constant as JSON Schema `const` defines it.
    pub fn matches(&self, value: &Value) -> bool {
        match (self, value) {
            (Const::Null, Value::Null) => true,
            (Const::Bool(a), Value::Bool(b)) => a == b,
            (Const::Num(n), Value::Number(_)) => number_equals(value, *n),
            (Const::Str(a), Value::String(b)) => a == b,
            (Const::Array(items), Value::Array(values)) => {
                items.len() == values.len() && items.iter().zip(values).all(|(c, v)| c.matches(v))
            }
            (Const::Object(fields), Value::Object(map)) => {
                fields.len() == map.len()
                    && fields
                        .iter()
                        .all(|(k, c)| map.get(*k).is_some_and(|v| c.matches(v)))
            }
            _ => false,
        }
    }
}

/// Whether an argument is the string `text` (absent and non-strings are not).
#[inline]
pub fn is_str(value: Option<&Value>, text: &str) -> bool {
    as_str(value) == Some(text)
}

/// Whether an argument is one of the strings `texts` (absent and
/// non-strings are not).
#[inline]
pub fn is_str_in(value: Option<&Value>, texts: &[&str]) -> bool {
    as_str(value).is_some_and(|s| texts.contains(&s))
}

/// The tests of this module on an argument that may be absent: `false` when
/// it is, the test of the same name otherwise. Generated matching calls
/// these rather than a `match` of its own per test, which is most of what a
/// generated file of thousands of tools costs the compiler.
pub mod arg {
    use serde_json::Value;

    use super::Num;

    macro_rules! on_argument {
        ($($(#[$doc:meta])* $name:ident($bound:ty);)*) => {$(
            $(#[$doc])*
            #[inline]
            pub fn $name(value: Option<&Value>, bound: $bound) -> bool {
                match value {
                    Some(value) => super::$name(value, bound),
                    None => false,
                }
            }
        )*};
    }

    on_argument! {
        /// [`super::minimum`] of a present argument.
        minimum(Num);
        /// [`super::maximum`] of a present argument.
        maximum(Num);
        /// [`super::exclusive_minimum`] of a present argument.
        exclusive_minimum(Num);
        /// [`super::exclusive_maximum`] of a present argument.
        exclusive_maximum(Num);
        /// [`super::number_equals`] of a present argument.
        number_equals(Num);
        /// [`super::str_is`] of a present argument.
        str_is(&str);
        /// [`super::str_starts_with`] of a present argument.
        str_starts_with(&str);
        /// [`super::str_ends_with`] of a present argument.
        str_ends_with(&str);
        /// [`super::str_contains`] of a present argument.
        str_contains(&str);
        /// [`super::has_keys`] of a present argument.
        has_keys(&[&str]);
        /// [`super::min_length`] of a present argument.
        min_length(u64);
        /// [`super::max_length`] of a present argument.
        max_length(u64);
        /// [`super::min_items`] of a present argument.
        min_items(u64);
        /// [`super::max_items`] of a present argument.
        max_items(u64);
    }
}

/// Appends `s` as a JSON string literal (quoted and escaped as serde_json
/// writes it).
pub(crate) fn push_str_literal(out: &mut String, s: &str) {
    match serde_json::to_string(s) {
        Ok(text) => out.push_str(&text),
        // Serializing a string cannot fail; an empty string keeps the text JSON.
        Err(_) => out.push_str("\"\""),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_exactly() {
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(!json_equal(
            &json!(9007199254740993u64),
            &json!(9007199254740992u64)
        ));
        assert!(json_equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(has_type(&json!(2.0), "integer"));
        assert!(!has_type(&json!(2.5), "integer"));
        let big = Number::from(u64::MAX);
        let neg = Number::from(-1i64);
        assert_eq!(compare_numbers(&big, &neg), Some(Ordering::Greater));
        assert_eq!(compare_numbers(&neg, &big), Some(Ordering::Less));
    }

    #[test]
    fn bounds_hold_vacuously_for_other_types() {
        assert!(minimum(&json!("x"), Num::Int(3)));
        assert!(!minimum(&json!(2), Num::Int(3)));
        assert!(exclusive_maximum(&json!(2.5), Num::Int(3)));
        assert!(!exclusive_maximum(&json!(3.0), Num::Int(3)));
        assert!(maximum(&json!(u64::MAX), Num::UInt(u64::MAX)));
        assert!(!exclusive_minimum(&json!(-1), Num::Float(-0.5)));
    }

    #[test]
    fn lengths_count_characters() {
        assert!(min_length(&json!("éé"), 2));
        assert!(!min_length(&json!("é"), 2));
        assert!(max_length(&json!("éé"), 2));
        assert!(!max_length(&json!("ééé"), 2));
        assert!(min_length(&json!(5), 9));
        assert!(min_items(&json!([1, 2]), 2) && !min_items(&json!([1]), 2));
        assert!(max_items(&json!([]), 0) && !max_items(&json!([1]), 0));
        assert!(min_items(&json!("ab"), 9) && max_items(&json!({"a": 1}), 0));
    }

    /// An argument's tests: absent is never a match; present, the test of
    /// the same name on the value.
    #[test]
    fn argument_tests_are_false_when_absent() {
        let (s, n) = (json!("src/x"), json!(3));
        assert!(is_str(Some(&s), "src/x") && !is_str(Some(&n), "3") && !is_str(None, ""));
        assert!(is_str_in(Some(&s), &["a", "src/x"]) && !is_str_in(Some(&s), &[]));
        assert!(!is_str_in(None, &["a"]) && !is_str_in(Some(&n), &["3"]));
        assert!(arg::str_starts_with(Some(&s), "src/") && !arg::str_starts_with(None, ""));
        // A test a non-string passes (`pattern` on a number) passes present.
        assert!(arg::str_starts_with(Some(&n), "x") && arg::str_is(Some(&n), "x"));
        assert!(arg::maximum(Some(&n), Num::Int(3)) && !arg::maximum(Some(&n), Num::Int(2)));
        assert!(!arg::minimum(None, Num::Int(0)) && !arg::number_equals(None, Num::Int(3)));
        assert!(arg::number_equals(Some(&n), Num::Float(3.0)));
        assert!(arg::max_length(Some(&s), 5) && !arg::min_length(Some(&s), 6));
        assert!(!arg::has_keys(None, &[]) && arg::has_keys(Some(&json!({"a": 1})), &["a"]));
        assert!(arg::min_items(Some(&json!([1])), 1) && !arg::max_items(None, 9));
    }

    #[test]
    fn constants_compare_like_json_equal() {
        static FIELDS: [(&str, Const); 2] = [
            ("a", Const::Array(&[Const::Num(Num::Int(1)), Const::Null])),
            ("b", Const::Str("x")),
        ];
        let c = Const::Object(&FIELDS);
        assert!(c.matches(&json!({"b": "x", "a": [1.0, null]})));
        assert!(!c.matches(&json!({"b": "x", "a": [1.0, null], "c": 1})));
        assert!(!c.matches(&json!({"b": "x", "a": [2, null]})));
        assert!(Const::Num(Num::Float(2.0)).matches(&json!(2)));
        assert!(!Const::Bool(true).matches(&json!(1)));
    }
}
