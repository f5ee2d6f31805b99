//! A `tools/list` answer annotated on its text — read in one pass with its
//! envelope, or in two where one cannot read it — is the answer annotated
//! as a parsed tree: the same tools, members and member order.

use mcp_resolve_runtime::Dialect;
use serde_json::{Value, json};

use super::{EXTENSION, Effect, Guarded, Harness, asking_guard, host_lines, rules};
use crate::rules::{ProxyRules, Rewrite};

/// Tools as servers list them, each described by the rules or not: what
/// one pass reads (annotations in their place, or none) and what it leaves
/// to two (annotations empty, not an object, a first key with an escape,
/// written twice), names with escapes, `_meta`, odd spacing, and an item
/// that is no tool.
fn tools(described: &str) -> Vec<String> {
    let mut tools = Vec::new();
    for name in [described, "other"] {
        tools.extend([
            format!(r#"{{"name":"{name}","inputSchema":{{"type":"object"}}}}"#),
            format!(
                r#"{{"name":"{name}","annotations":{{"readOnlyHint":false,"title":"T"}},"inputSchema":{{"type":"object","properties":{{"a":{{"enum":["}}"]}}}}}}}}"#
            ),
            format!(r#"{{ "annotations" : {{ }} , "name" : "{name}" }}"#),
            format!(r#"{{"name":"{name}","annotations":[1],"_meta":{{"k":1}}}}"#),
            format!(r#"{{"name":"{name}","annotations":{{"re\u0061dOnlyHint":true,"x":1}}}}"#),
            format!(
                r#"{{"annotations":{{"readOnlyHint":true}},"name":"{name}","annotations":{{"destructiveHint":false,"x":[1,{{"y":"}}"}}]}}}}"#
            ),
            format!(r#"{{"name":"{name}","_meta":{{"other":[1, 2]}},"annotations":{{"idempotentHint":true}}	}}"#),
        ]);
    }
    tools.push(format!(
        r#"{{"n\u0061me":"{described}","annotations":{{"readOnlyHint":true}}}}"#
    ));
    tools.push(r#"{"name":"manage\u005ffiles","annotations":{"openWorldHint":true}}"#.into());
    tools.push("3".into());
    tools
}

/// The answer the session passes on for a listing of `tools`, and the
/// listing annotated as a tree.
fn both(h: &mut Harness<'_>, rules: &ProxyRules, id: u64, tools: &[&str], marked: bool) {
    let list = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
    h.host(&list);
    let result = format!(r#"{{"tools":[{}],"nextCursor":"n"}}"#, tools.join(" , "));
    let answer = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
    let out = h.server(&answer);
    let [Effect::Host(line)] = &out[..] else {
        panic!("{out:?}")
    };
    let got: Value = mcp_resolve_protocol::json::from_str(line).unwrap();
    let mut expected: Value = mcp_resolve_protocol::json::from_str(&result).unwrap();
    rules.rewrite(&Rewrite::Tools { marked }, &mut expected);
    assert_eq!(got["result"], expected, "{tools:?} {marked}");
    // Member order too, as a parsed object keeps it.
    let keys = |v: &Value| -> Vec<Vec<String>> {
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t.as_object()
                    .map_or(vec![], |o| o.keys().cloned().collect())
            })
            .collect()
    };
    assert_eq!(keys(&got["result"]), keys(&expected), "{tools:?}");
}

#[test]
fn a_listing_annotated_on_its_text_is_the_listing_annotated_as_a_tree() {
    for dialect in [Dialect::Extension, Dialect::Sep1862, Dialect::Annotations] {
        let rules = rules(dialect);
        let guard = Guarded::default();
        for declares in [false, true] {
            let capabilities = if declares {
                json!({"extensions": {EXTENSION: {}}})
            } else {
                json!({})
            };
            // (Only the extension's markers wait for the client to declare it.)
            let marked = rules.may_mark(None, Some(&capabilities));
            let mut h = Harness::new(&rules, &guard, None);
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                           "clientInfo": {"name": "test", "version": "1"}}});
            h.host(&init.to_string());
            h.server(
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#,
            );
            let all = tools("manage_files");
            let mut id = 1;
            // Each tool alone, then all of them in one listing.
            for tool in &all {
                both(&mut h, &rules, id, &[tool], marked);
                id += 1;
            }
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            both(&mut h, &rules, id, &all, marked);
        }
    }
}

/// A listing annotated on its text still tells the policy what the server
/// lists of the tools the rules do not describe: a call to one the server
/// lists as destructive is asked, one it lists as read-only is not, and a
/// tool the rules describe is judged by the rules whatever the server lists.
#[test]
fn the_listed_annotations_of_undescribed_tools_judge_their_calls() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"elicitation": {}}));
    h.host(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let out = h.server(
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[
            {"name":"wipe","annotations":{"readOnlyHint":false,"destructiveHint":true}},
            {"name":"peek","annotations":{"readOnlyHint":true}},
            {"name":"manage_files","annotations":{"readOnlyHint":true,"destructiveHint":false}}]}}"#,
    );
    assert_eq!(host_lines(&out).len(), 1, "{out:?}");
    let call = |id: u64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
        .to_string()
    };
    let asked = |out: &[Effect]| {
        host_lines(out)
            .iter()
            .any(|line| line["method"] == "elicitation/create")
    };
    let peek = call(2, "peek", json!({}));
    assert_eq!(h.host(&peek), vec![Effect::Server(peek)]);
    assert!(asked(&h.host(&call(3, "wipe", json!({})))));
    // The rules, not the server, say a delete is destructive.
    let delete = call(4, "manage_files", json!({"path": "a", "action": "delete"}));
    assert!(asked(&h.host(&delete)));
}

/// A `tools/list` whose params are `{}` (read without a parse) is forwarded
/// and answered as one without params or with other params.
#[test]
fn a_listing_asked_with_empty_params_is_answered_alike() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"extensions": {EXTENSION: {}}}));
    let answer = |id: u64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"manage_files","annotations":{{"title":"M"}}}}]}}}}"#
        )
    };
    let mut results = Vec::new();
    for (id, params) in [
        (1, ""),
        (2, r#","params":{}"#),
        (3, ",\"params\":{ \n\t}"),
        (4, r#","params":{"cursor":"c"}"#),
    ] {
        let list = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"{params}}}"#);
        assert_eq!(h.host(&list), vec![Effect::Server(list.clone())]);
        let lines = host_lines(&h.server(&answer(id)));
        assert_eq!(lines.len(), 1, "{params}");
        assert_eq!(lines[0]["id"], id);
        results.push(lines[0]["result"].clone());
    }
    assert_eq!(
        results[0]["tools"][0]["annotations"]["destructiveHint"],
        true
    );
    assert!(results.iter().all(|r| *r == results[0]), "{results:?}");
}
