//! `--list-by-scope`: a host's `tools/list` answer lists only the tools its
//! token can call. On the text (no pin, declarations or verification) the
//! tools are cut out of the answer as written, and the answer is the one
//! filtered as a tree; with a pin, the tree is filtered.

use std::collections::BTreeSet;

use mcp_resolve_protocol::Screen;

use super::*;
use crate::judge;
use crate::rules::Rewrite;
use crate::session::{HostMessage, read_host};

/// A principal granting `scopes`.
fn token(scopes: &[&str]) -> mcp_resolve_policy::Principal {
    mcp_resolve_policy::Principal {
        sub: Some("alice".into()),
        client_id: None,
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
    }
}

/// A harness whose session lists by scope, its host's legacy session open.
fn listing_by_scope<'s>(rules: &'s ProxyRules, guard: &'s Guarded) -> Harness<'s> {
    let mut h = Harness::new(rules, guard, None);
    h.session.lists_by_scope = true;
    h.initialize(json!({}));
    h
}

/// The host's `tools/list` (id `id`), read by its transport and handed over
/// for `principal`; then the server's answer listing `tools`: the host's
/// answer, parsed.
fn listed(
    h: &mut Harness<'_>,
    id: u64,
    principal: Option<mcp_resolve_policy::Principal>,
    tools: &[&str],
) -> Value {
    let list = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
    let (message, params) =
        read_host(&mut Screen::default(), h.session.rules, &list).expect("a listing request");
    let read = HostMessage::read(&list, &message, params);
    let mut out = Vec::new();
    h.session.from_host(
        Input::Read(Box::new(read), principal),
        h.clock.now(),
        &mut out,
    );
    assert_eq!(out, vec![Effect::Server(list.clone())]);
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}] ,"nextCursor":"n"}}}}"#,
        tools.join(" ,\n ")
    );
    let lines = host_lines(&h.server(&answer));
    assert_eq!(lines.len(), 1, "{lines:?}");
    lines.into_iter().next().unwrap()
}

/// The names a listing answer lists (`None` for items without one).
fn names(answer: &Value) -> Vec<Option<String>> {
    answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

#[test]
fn a_listing_on_its_text_is_the_listing_filtered_as_a_tree() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = listing_by_scope(&rules, &guard);
    let described = r#"{"name":"manage_files","annotations":{"readOnlyHint":true}}"#;
    let escaped = r#"{"name":"manage\u005ffiles","inputSchema":{"type":"object"}}"#;
    let other = r#"{"name":"other","annotations":{"title":"O"}}"#;
    let nameless = r#"{"title":"no name"}"#;
    // Every arrangement of up to four items: cut at the start, the middle,
    // the end, in runs, and all of them.
    let items = [described, escaped, other, nameless, "3"];
    let mut shapes: Vec<Vec<&str>> = vec![vec![]];
    for _ in 0..4 {
        let longer: Vec<Vec<&str>> = shapes
            .iter()
            .filter(|s| s.len() == shapes.last().unwrap().len())
            .flat_map(|s| {
                items.iter().map(move |item| {
                    let mut s = s.clone();
                    s.push(item);
                    s
                })
            })
            .collect();
        shapes.extend(longer);
    }
    let mut id = 1;
    for granted in [&[][..], &["files:write"], &["files:read", "files:write"]] {
        let scopes: BTreeSet<String> = granted.iter().map(|s| s.to_string()).collect();
        for tools in &shapes {
            let got = listed(&mut h, id, Some(token(granted)), tools);
            id += 1;
            let mut expected: Value = mcp_resolve_protocol::json::from_str(&format!(
                r#"{{"tools":[{}],"nextCursor":"n"}}"#,
                tools.join(",")
            ))
            .unwrap();
            rules.rewrite(&Rewrite::Tools { marked: false }, &mut expected);
            expected["tools"].as_array_mut().unwrap().retain(|tool| {
                tool.get("name")
                    .and_then(Value::as_str)
                    .is_none_or(|name| judge::listed_to(&rules, name, &scopes))
            });
            assert_eq!(got["result"], expected, "{granted:?} {tools:?}");
        }
    }
}

#[test]
fn a_token_is_listed_the_tools_it_can_call() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = listing_by_scope(&rules, &guard);
    let tools = [
        r#"{"name":"manage_files"}"#,
        r#"{"name":"other","annotations":{"readOnlyHint":true}}"#,
    ];
    let all = vec![Some("manage_files".to_owned()), Some("other".to_owned())];
    let others = vec![Some("other".to_owned())];
    // A variant's scopes are enough (`read` needs only `files:read`).
    assert_eq!(
        names(&listed(&mut h, 1, Some(token(&["files:read"])), &tools)),
        all
    );
    assert_eq!(
        names(&listed(&mut h, 2, Some(token(&["other"])), &tools)),
        others
    );
    assert_eq!(names(&listed(&mut h, 3, Some(token(&[])), &tools)), others);
    // A message without a token (no `--auth-issuer` on it) is listed all.
    assert_eq!(names(&listed(&mut h, 4, None, &tools)), all);
    // Without `--list-by-scope`, every token is listed all.
    let mut plain = Harness::new(&rules, &guard, None);
    plain.initialize(json!({}));
    assert_eq!(names(&listed(&mut plain, 1, Some(token(&[])), &tools)), all);
}

#[test]
fn a_token_is_listed_the_tools_it_can_call_under_a_pin() {
    let rules = rules(Dialect::Extension);
    let signature = mcp_resolve::emit::signature::signature(rules.server());
    let guard = Guarded::from(Guard {
        pin: Some(mcp_resolve_host::Signature::from_value(signature).unwrap()),
        ..unkeyed()
    });
    let mut h = listing_by_scope(&rules, &guard);
    // The tool as the signature pins it.
    let tool = &rules.server().tools[0];
    let tool = json!({"name": tool.name, "title": tool.title, "description": tool.description,
                      "inputSchema": tool.input_schema})
    .to_string();
    let tools = [tool.as_str()];
    let listed_to = |h: &mut Harness<'_>, id, scopes: &[&str]| {
        names(&listed(h, id, Some(token(scopes)), &tools))
    };
    assert_eq!(listed_to(&mut h, 1, &["files:read"]).len(), 1);
    assert_eq!(listed_to(&mut h, 2, &[]), Vec::<Option<String>>::new());
    assert_eq!(listed_to(&mut h, 3, &["files:write"]).len(), 1);
}

/// What the text cannot read (`tools` written twice, first as no array: a
/// hostile server's listing) is filtered as a tree: a listing is never
/// passed on unfiltered.
#[test]
fn a_listing_the_text_cannot_read_is_filtered_as_a_tree() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = listing_by_scope(&rules, &guard);
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (message, params) = read_host(&mut Screen::default(), &rules, list).unwrap();
    let read = HostMessage::read(list, &message, params);
    let mut out = Vec::new();
    h.session.from_host(
        Input::Read(Box::new(read), Some(token(&[]))),
        h.clock.now(),
        &mut out,
    );
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":null,"tools":[{"name":"manage_files"},{"name":"kept"}]}}"#;
    let lines = host_lines(&h.server(answer));
    assert_eq!(lines.len(), 1, "{lines:?}");
    // (A parser keeps the last `tools`, as the host's would.)
    assert_eq!(names(&lines[0]), vec![Some("kept".to_owned())]);
}

/// Without `--list-by-scope` too, a listing the text cannot read gets the
/// rules' annotations, read as the host's parser reads it.
#[test]
fn a_listing_the_text_cannot_read_is_annotated_as_a_tree() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({}));
    h.host(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":null,"tools":[{"name":"manage_files","annotations":{"destructiveHint":false}}]}}"#;
    let lines = host_lines(&h.server(answer));
    assert_eq!(lines.len(), 1, "{lines:?}");
    let tools = lines[0]["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(
        tools[0]["annotations"]["destructiveHint"], true,
        "{tools:?}"
    );
}

/// A listing answer with no list of tools has nothing to annotate or
/// filter: it goes as the server wrote it, by scope or not.
#[test]
fn a_listing_without_a_list_of_tools_goes_as_written() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    for by_scope in [false, true] {
        let mut h = Harness::new(&rules, &guard, None);
        h.session.lists_by_scope = by_scope;
        h.initialize(json!({}));
        for (id, result) in [
            (1, r#"{ }"#),
            (2, r#"{"tools": 3, "n": 1.50}"#),
            (3, r#"{"tools":null,"tools" : "x"}"#),
        ] {
            let list = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
            let (message, params) = read_host(&mut Screen::default(), &rules, &list).unwrap();
            let read = HostMessage::read(&list, &message, params);
            let mut out = Vec::new();
            h.session.from_host(
                Input::Read(Box::new(read), Some(token(&[]))),
                h.clock.now(),
                &mut out,
            );
            let answer = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
            assert_eq!(h.server(&answer), vec![Effect::Host(answer.clone())]);
        }
    }
}
