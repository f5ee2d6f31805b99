//! `when` conditions in their structured form: conjunctions of argument
//! matchers, and the matcher keywords (a JSON Schema subset) of each.

use super::*;

impl Decoder<'_> {
    pub(super) fn when(&mut self, node: &YNode) -> Option<When> {
        match &node.value {
            YValue::String(s) => {
                let raw = self.text.get(node.start..node.end).unwrap_or("");
                let offsets = string_offsets(raw, node.start, s);
                let map = |i: usize| {
                    offsets
                        .get(i)
                        .or(offsets.last())
                        .copied()
                        .unwrap_or(node.start)
                };
                match crate::parse::expr::parse_expression(s, self.file, &map) {
                    Ok(expr) => Some(When::Expr(expr)),
                    Err(d) => {
                        self.diags.push(d);
                        Some(When::Invalid(self.span(node)))
                    }
                }
            }
            YValue::Null => Some(When::Always(self.span(node))),
            YValue::Map(entries) if entries.is_empty() => Some(When::Always(self.span(node))),
            YValue::Map(_) => Some(When::Structured(vec![self.conjunction(node)?])),
            YValue::Seq(items) => {
                let mut conjunctions = Vec::new();
                for item in items {
                    conjunctions.push(self.conjunction(item)?);
                }
                Some(When::Structured(conjunctions))
            }
            _ => {
                self.wrong(
                    node,
                    "a mapping, a sequence of mappings or an expression string for `when`",
                );
                None
            }
        }
    }

    pub(super) fn conjunction(&mut self, node: &YNode) -> Option<Conjunction> {
        let YValue::Map(entries) = &node.value else {
            self.wrong(node, "a mapping of argument patterns");
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for (k, v) in entries {
            let Some(path) = self.string(k, "an argument path") else {
                ok = false;
                continue;
            };
            // The bound an expression has on `a.b.c` (`.rules` writes these
            // paths as expressions): one limit for both syntaxes.
            let parts = path.value.split('.').count();
            if parts > crate::parse::expr::MAX_CHAIN + 1 {
                self.error(
                    Code::InvalidValue,
                    format!(
                        "an argument path of {parts} `.`-separated parts; at most {} (as in an expression)",
                        crate::parse::expr::MAX_CHAIN + 1
                    ),
                    path.span,
                );
                ok = false;
                continue;
            }
            match self.matcher(v) {
                Some(m) => out.push((path, m)),
                None => ok = false,
            }
        }
        ok.then(|| Conjunction {
            entries: out,
            span: self.span(node),
        })
    }

    pub(super) fn matcher(&mut self, node: &YNode) -> Option<Matcher> {
        if let YValue::Map(entries) = &node.value
            && let Some((_, v)) = entries
                .iter()
                .find(|(k, _)| k.value == YValue::String("absent".into()))
        {
            if entries.len() > 1 {
                let span = self.span(node);
                self.error(
                    Code::InvalidValue,
                    "`absent` cannot be combined with other keywords".into(),
                    span,
                );
                return None;
            }
            return self.boolean(v, "`absent`").map(Matcher::Absent);
        }
        self.value_matcher(node).map(Matcher::Value)
    }

    pub(super) fn value_matcher(&mut self, node: &YNode) -> Option<ValueMatcher> {
        let span = self.span(node);
        match &node.value {
            YValue::Seq(items) => {
                let mut values = Vec::new();
                for item in items {
                    if matches!(item.value, YValue::Seq(_) | YValue::Map(_)) {
                        self.wrong(item, "a scalar in a value list");
                        return None;
                    }
                    values.push(item.to_json());
                }
                Some(ValueMatcher::Enum(Spanned::new(values, span)))
            }
            YValue::Map(_) => {
                let fields = self.fields(node, "matcher", MATCHER_KEYWORDS)?;
                if fields.entries.is_empty() {
                    // `{}` holds for any present value.
                    return Some(ValueMatcher::AllOf(Vec::new(), span));
                }
                let mut parts = Vec::new();
                let mut ok = true;
                for (key, _, value) in &fields.entries {
                    match self.keyword(key, value) {
                        Some(m) => parts.push(m),
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                if parts.len() == 1 {
                    parts.pop()
                } else {
                    Some(ValueMatcher::AllOf(parts, span))
                }
            }
            _ => Some(ValueMatcher::Const(Spanned::new(node.to_json(), span))),
        }
    }

    pub(super) fn keyword(&mut self, key: &str, node: &YNode) -> Option<ValueMatcher> {
        let span = self.span(node);
        let what = format!("`{key}`");
        Some(match key {
            "const" => ValueMatcher::Const(Spanned::new(node.to_json(), span)),
            "enum" => {
                let items = self.seq(node, &what)?;
                ValueMatcher::Enum(Spanned::new(
                    items.iter().map(YNode::to_json).collect(),
                    span,
                ))
            }
            "type" => {
                let names = match &node.value {
                    YValue::String(s) => vec![s.clone()],
                    YValue::Seq(items) => items
                        .iter()
                        .filter_map(|i| self.string(i, "a type name"))
                        .map(|s| s.value)
                        .collect(),
                    _ => {
                        self.wrong(node, "a type name or a list of them");
                        return None;
                    }
                };
                for n in &names {
                    if !JSON_TYPES.contains(&n.as_str()) {
                        self.error(
                            Code::InvalidValue,
                            format!("unknown JSON Schema type `{n}`"),
                            span,
                        )
                        .help = suggest::did_you_mean(n, JSON_TYPES.iter().copied());
                        return None;
                    }
                }
                ValueMatcher::Type(Spanned::new(names, span))
            }
            "pattern" => ValueMatcher::Pattern(self.string(node, &what)?),
            "minLength" => ValueMatcher::MinLength(self.uint(node, &what)?),
            "maxLength" => ValueMatcher::MaxLength(self.uint(node, &what)?),
            "minimum" => ValueMatcher::Minimum(self.number(node, &what)?),
            "maximum" => ValueMatcher::Maximum(self.number(node, &what)?),
            "exclusiveMinimum" => ValueMatcher::ExclusiveMinimum(self.number(node, &what)?),
            "exclusiveMaximum" => ValueMatcher::ExclusiveMaximum(self.number(node, &what)?),
            "not" => ValueMatcher::Not(Box::new(self.schema_matcher(node)?), span),
            "minItems" => ValueMatcher::MinItems(self.uint(node, &what)?),
            "maxItems" => ValueMatcher::MaxItems(self.uint(node, &what)?),
            "items" => ValueMatcher::Items(Box::new(self.schema_matcher(node)?), span),
            "contains" => ValueMatcher::Contains(Box::new(self.schema_matcher(node)?), span),
            "properties" => {
                let YValue::Map(entries) = &node.value else {
                    self.wrong(node, "a mapping of property names to keyword mappings");
                    return None;
                };
                let mut props = Vec::new();
                for (k, v) in entries {
                    let name = self.string(k, "a property name")?;
                    if props
                        .iter()
                        .any(|(n, _): &(Spanned<String>, _)| n.value == name.value)
                    {
                        self.error(
                            Code::InvalidValue,
                            format!("property `{}` is named twice", name.value),
                            name.span,
                        );
                        return None;
                    }
                    props.push((name, self.schema_matcher(v)?));
                }
                ValueMatcher::Properties(props, span)
            }
            "required" => {
                let items = self.seq(node, &what)?;
                let mut names = Vec::new();
                for item in items {
                    names.push(self.string(item, "a property name")?.value);
                }
                ValueMatcher::Required(Spanned::new(names, span))
            }
            "anyOf" | "allOf" => {
                let items = self.seq(node, &what)?;
                let mut parts = Vec::new();
                for item in items {
                    parts.push(self.schema_matcher(item)?);
                }
                if key == "anyOf" {
                    ValueMatcher::AnyOf(parts, span)
                } else {
                    ValueMatcher::AllOf(parts, span)
                }
            }
            _ => return None,
        })
    }

    /// Inside `not`/`anyOf`/`allOf` a subschema is a keyword mapping (scalars
    /// are not schemas there, and `absent` has no meaning).
    pub(super) fn schema_matcher(&mut self, node: &YNode) -> Option<ValueMatcher> {
        if !matches!(node.value, YValue::Map(_)) {
            self.wrong(node, "a keyword mapping");
            return None;
        }
        if let YValue::Map(entries) = &node.value
            && let Some((k, _)) = entries
                .iter()
                .find(|(k, _)| k.value == YValue::String("absent".into()))
        {
            let span = self.span(k);
            self.error(
                Code::InvalidValue,
                "`absent` is only allowed directly under an argument path".into(),
                span,
            );
            return None;
        }
        self.value_matcher(node)
    }
}
