//! The Cedar engine: schemas, decisions, diagnostics, decision tables, and
//! the YAML form's translation held to the YAML engine's decisions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_resolve::ir::Server;
use mcp_resolve::source::FileId;
use mcp_resolve_policy::cedar::table::{self, Cell};
use mcp_resolve_policy::cedar::{Engine, ServerSchema, Source};
use mcp_resolve_policy::{Call, Decision, Policy, Principal, SessionFacts};
use mcp_resolve_runtime::Annotations;
use serde_json::json;

fn server(path: &str) -> Server {
    let project = mcp_resolve::load(&[path.into()]).unwrap();
    assert!(!project.has_errors(), "{path}");
    project.single_server().unwrap().clone()
}

fn test_server() -> Server {
    server("../../tests/fixtures/policies/test-server.yaml")
}

fn load(server: &Server, text: &str) -> Result<Engine, Vec<String>> {
    Engine::load(
        server,
        &[Source {
            file: FileId(0),
            name: "p.cedar",
            text,
        }],
        None,
    )
    .map_err(|ds| {
        ds.iter()
            .map(|d| {
                let at = d.span.map_or(String::new(), |s| {
                    let line = text[..s.start].matches('\n').count() + 1;
                    format!("{line}:")
                });
                format!("{at}{}", d.message)
            })
            .collect()
    })
}

fn read() -> Annotations {
    Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        ..Annotations::defaults()
    }
}

fn call<'a>(
    tool: &'a str,
    arguments: &'a serde_json::Value,
    variant: Option<&'a str>,
    annotations: &'a Annotations,
    scopes: &'a [String],
) -> Call<'a> {
    Call {
        tool,
        arguments: Some(arguments),
        variant,
        annotations,
        scopes,
        described: true,
        principal: None,
        session: None,
    }
}

const POLICIES: &str = r#"
@id("reads")
permit(principal, action, resource) when { context.resolution.readOnlyHint };

@id("ask-writes")
@ask("writes a file")
permit(principal, action == TestServer::Action::"files", resource)
when { context.resolution has variant && context.resolution.variant == "write" };

@id("no-etc")
forbid(principal, action == TestServer::Action::"files", resource)
when { context.input.path like "/etc/*" };

@id("recursive-needs-alice")
forbid(principal, action == TestServer::Action::"files", resource)
when { context.input has options && context.input.options has recursive
       && context.input.options.recursive && principal != TestServer::User::"alice" };
"#;

#[test]
fn decisions_follow_cedar_with_ask_and_the_deciding_policies() {
    let server = test_server();
    let engine = load(&server, POLICIES).unwrap();
    let scopes = ["files:read".to_string()];
    let a = read();
    let args = json!({"path": "/tmp/x", "action": "read"});
    let outcome = engine.decide(&call("files", &args, Some("read"), &a, &scopes));
    assert_eq!(outcome.decision, Decision::Allow);
    assert_eq!(outcome.policies, ["reads"]);
    // A forbid wins, and names itself.
    let args = json!({"path": "/etc/passwd", "action": "read"});
    let outcome = engine.decide(&call("files", &args, Some("read"), &a, &scopes));
    assert_eq!(outcome.decision, Decision::Deny);
    assert_eq!(outcome.policies, ["no-etc"]);
    // `@ask` on a determining permit asks, with its reason.
    let write = Annotations {
        destructive: false,
        ..Annotations::defaults()
    };
    let args = json!({"path": "/tmp/x", "action": "write"});
    let outcome = engine.decide(&call("files", &args, Some("write"), &write, &[]));
    assert_eq!(outcome.decision, Decision::Ask);
    assert_eq!(outcome.reason.as_deref(), Some("writes a file"));
    // Nothing permits: deny, no policy.
    let destroy = Annotations::defaults();
    let args = json!({"path": "/tmp/x", "action": "delete"});
    let outcome = engine.decide(&call("files", &args, None, &destroy, &[]));
    assert_eq!(
        (outcome.decision, outcome.policies.len()),
        (Decision::Deny, 0)
    );
    // Nested arguments, and the principal from the token.
    let args = json!({"path": "/tmp", "action": "read", "options": {"recursive": true}});
    let alice = Principal {
        sub: Some("alice".into()),
        ..Principal::default()
    };
    let anonymous = call("files", &args, Some("read"), &a, &scopes);
    assert_eq!(
        engine.decide(&anonymous).policies,
        ["recursive-needs-alice"]
    );
    let as_alice = Call {
        principal: Some(&alice),
        ..anonymous
    };
    assert_eq!(engine.decide(&as_alice).decision, Decision::Allow);
}

#[test]
fn a_tool_the_rules_do_not_describe_is_an_action_in_call_tool_without_input() {
    let server = test_server();
    let engine = load(
        &server,
        r#"@id("group") permit(principal, action in TestServer::Action::"call_tool", resource)
           when { context.resolution.readOnlyHint && !context.resolution.described };"#,
    )
    .unwrap();
    let a = read();
    let args = json!({"anything": [1, 2.5, null]});
    let undescribed = Call {
        described: false,
        ..call("other", &args, None, &a, &[])
    };
    assert_eq!(engine.decide(&undescribed).decision, Decision::Allow);
}

#[test]
fn a_forbid_that_cannot_be_evaluated_refuses_the_call() {
    let server = test_server();
    let engine = load(
        &server,
        r#"@id("all") permit(principal, action, resource);
           @id("overflow") forbid(principal, action == TestServer::Action::"files", resource)
           when { context.input has count && context.input.count + 9223372036854775807 > 0 };"#,
    )
    .unwrap();
    let a = read();
    let args = json!({"path": "p", "action": "read", "count": 2});
    let outcome = engine.decide(&call("files", &args, Some("read"), &a, &[]));
    assert_eq!(outcome.decision, Decision::Deny);
    assert_eq!(outcome.policies, ["overflow"]);
    assert!(outcome.reason.unwrap().contains("could not be evaluated"));
    let args = json!({"path": "p", "action": "read", "count": 0});
    let outcome = engine.decide(&call("files", &args, Some("read"), &a, &[]));
    assert_eq!(
        outcome.decision,
        Decision::Deny,
        "0 + max does not overflow, but is > 0"
    );
    let args = json!({"path": "p", "action": "read"});
    assert_eq!(
        engine
            .decide(&call("files", &args, Some("read"), &a, &[]))
            .decision,
        Decision::Allow
    );
}

#[test]
fn policies_that_do_not_validate_are_refused_with_cedars_words_at_their_place() {
    let server = test_server();
    let errors = load(
        &server,
        "permit(principal, action, resource)\n  when { context.resolution.readOnlyHnt };\n\
         permit(principal, action == TestServer::Action::\"file\", resource);\n\
         permit(principal, action, resource) when { context.resolution.variant == \"read\" };\n",
    )
    .unwrap_err();
    let text = errors.join("\n");
    for expected in [
        "2:policy `p.cedar:1`: for policy `policy0`, attribute `resolution.readOnlyHnt`",
        "3:policy `p.cedar:3`: for policy `policy1`, unrecognized action `TestServer::Action::\"file\"`",
        "4:policy `p.cedar:4`: for policy `policy2`, unable to guarantee safety of access to optional attribute `resolution.variant`",
    ] {
        assert!(text.contains(expected), "{expected}\nnot in\n{text}");
    }
    // Syntax errors, at their line.
    let errors = load(&server, "permit(principal, action, resource)\nwhen { ;").unwrap_err();
    assert!(errors[0].starts_with("2:"), "{errors:?}");
    // Templates need links; two policies with one `@id`.
    let errors = load(
        &server,
        "permit(principal == ?principal, action, resource);",
    )
    .unwrap_err();
    assert!(errors[0].contains("template"), "{errors:?}");
    let errors = load(
        &server,
        "@id(\"a\") permit(principal, action, resource);\n@id(\"a\") forbid(principal, action, resource);",
    )
    .unwrap_err();
    assert!(
        errors[0].contains("two policies are named `a`"),
        "{errors:?}"
    );
    // A principal outside the schema's types.
    let bad = Engine::load(
        &server,
        &[Source {
            file: FileId(0),
            name: "p.cedar",
            text: "permit(principal, action, resource);",
        }],
        Some("Admin::\"root\""),
    )
    .unwrap_err();
    assert!(
        bad[0].message.contains("not of a principal type"),
        "{:?}",
        bad[0].message
    );
    assert!(
        Engine::load(
            &server,
            &[Source {
                file: FileId(0),
                name: "p.cedar",
                text: "permit(principal == TestServer::User::\"ci\", action, resource);",
            }],
            Some("User::\"ci\""),
        )
        .unwrap()
        .decide(&call("fetch", &json!({"url": "u"}), None, &read(), &[]))
        .decision
            == Decision::Allow
    );
}

#[test]
fn every_bundled_rules_file_has_a_schema_cedar_parses_and_the_same_every_time() {
    let mut seen = 0;
    for entry in std::fs::read_dir("../../rules").unwrap() {
        let path = entry.unwrap().path();
        let name = path.display().to_string();
        if !(name.ends_with(".yaml") || name.ends_with(".rules")) {
            continue;
        }
        let server = server(&name);
        let first = ServerSchema::of(&server).unwrap();
        let second = ServerSchema::of(&server).unwrap();
        assert_eq!(first.text, second.text, "{name}");
        assert_eq!(first.tools.len(), server.tools.len(), "{name}");
        // Every tool is an action, typed or not.
        for tool in &server.tools {
            assert!(
                first.text.contains(&format!("action \"{}\"", tool.name)),
                "{name}: {}",
                tool.name
            );
        }
        seen += 1;
    }
    assert!(seen >= 9);
    // Tools whose names are not identifiers are declared without `input`.
    let everything = ServerSchema::of(&server("../../rules/real-server-everything.yaml")).unwrap();
    assert!(everything.untyped.iter().any(|(t, _)| t == "get-sum"));
    assert!(!everything.untyped.iter().any(|(t, _)| t == "echo"));
}

#[test]
fn the_decision_table_says_depends_where_a_policy_reads_what_the_variant_does_not_fix() {
    let server = test_server();
    let engine = load(&server, POLICIES).unwrap();
    let rows = table::table(&engine, &server);
    let find = |tool: &str, variant: Option<&str>| {
        rows.iter()
            .find(|r| r.tool == tool && r.variant.as_deref() == variant)
            .unwrap()
            .cell
            .clone()
    };
    match find("files", Some("read")) {
        Cell::Depends {
            possible,
            on,
            because,
            examples,
        } => {
            // Calls of the row Cedar decides differently, each checked.
            let decisions: Vec<Decision> = examples.iter().map(|(d, _)| *d).collect();
            assert_eq!(decisions, [Decision::Allow, Decision::Deny], "{examples:?}");
            let (_, denied) = &examples[1];
            let a = read();
            let scopes = ["files:read".to_string()];
            assert_eq!(
                engine
                    .decide(&call("files", denied, Some("read"), &a, &scopes))
                    .decision,
                Decision::Deny,
                "{denied}"
            );
            assert_eq!(
                possible,
                [Decision::Allow, Decision::Deny].into_iter().collect()
            );
            assert!(on.contains(&table::Factor::Arguments));
            assert!(on.contains(&table::Factor::Principal));
            assert!(
                because
                    .iter()
                    .any(|b| b.contains("`no-etc` reads context.input.path"))
            );
        }
        other => panic!("{other:?}"),
    }
    // `files` is not exhaustive: its calls that match no variant get a row.
    // Nothing permits them; two forbids read more, but cannot make it
    // anything but deny.
    assert_eq!(
        find("files", None),
        Cell::Decided {
            decision: Decision::Deny,
            policies: vec![]
        }
    );
    // `fetch` reads nothing but its resolution: decided.
    assert_eq!(
        find("fetch", None),
        Cell::Decided {
            decision: Decision::Allow,
            policies: vec!["reads".into()]
        }
    );
    let text = table::render(&rows, false);
    assert!(
        text.contains("fetch  (static)              allow (reads)"),
        "{text}"
    );
    assert!(table::render(&rows, true).starts_with("| tool | variant | decision |"));
    assert!(table::render_html(&rows).contains("<tr class=\"allow\"><td><code>fetch</code>"));
    // Diff: dropping `reads` changes the read variant and fetch.
    let narrower = load(
        &server,
        &POLICIES.replace("@id(\"reads\")\npermit", "@id(\"reads\")\nforbid"),
    )
    .unwrap();
    let changes = table::diff(&rows, &table::table(&narrower, &server));
    let changed: Vec<(&str, Option<&str>)> = changes
        .iter()
        .map(|(r, _)| (r.tool.as_str(), r.variant.as_deref()))
        .collect();
    assert!(changed.contains(&("fetch", None)), "{changed:?}");
    assert!(!changed.contains(&("files", Some("write"))), "{changed:?}");
    assert!(table::render_diff(&[], false).contains("no variant's decision changes"));
}

/// A call's facts: tool, variant, annotations, scopes, principal, and
/// whether the rules describe the tool.
type Facts = (
    String,
    Option<String>,
    Annotations,
    Vec<String>,
    Option<Principal>,
    bool,
);

/// Every combination of the facts a YAML policy reads, for a server.
fn calls(server: &Server) -> Vec<Facts> {
    let mut tools: Vec<(String, Vec<Option<String>>, bool)> = server
        .tools
        .iter()
        .map(|t| {
            let mut variants: Vec<Option<String>> =
                t.variants.iter().map(|v| Some(v.name.clone())).collect();
            variants.push(None);
            variants.push(Some("append".into()));
            (t.name.clone(), variants, true)
        })
        .collect();
    tools.push(("other_tool".into(), vec![None, Some("read".into())], false));
    let scope_sets: Vec<Vec<String>> = vec![
        vec![],
        vec!["files:read".into()],
        vec!["files:write".into(), "admin".into()],
        vec!["files:write".into()],
    ];
    let principals = [
        None,
        Some(Principal {
            sub: Some("alice".into()),
            client_id: Some("host".into()),
            ..Principal::default()
        }),
        Some(Principal {
            sub: Some("bob".into()),
            client_id: Some("ci-bot".into()),
            ..Principal::default()
        }),
        Some(Principal {
            sub: None,
            client_id: Some("ci-bot".into()),
            ..Principal::default()
        }),
    ];
    let mut out = Vec::new();
    for (tool, variants, described) in &tools {
        for variant in variants {
            for bits in 0..16u8 {
                let annotations = Annotations {
                    read_only: bits & 1 != 0,
                    destructive: bits & 2 != 0,
                    idempotent: bits & 4 != 0,
                    open_world: bits & 8 != 0,
                    ..Annotations::defaults()
                };
                for scopes in &scope_sets {
                    for principal in &principals {
                        out.push((
                            tool.clone(),
                            variant.clone(),
                            annotations.clone(),
                            scopes.clone(),
                            principal.clone(),
                            *described,
                        ));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_yaml_forms_cedar_translation_decides_as_the_yaml_engine_on_every_call() {
    let mut compared = 0;
    for rules in [
        "../../rules/file-server.yaml",
        "../../rules/coding-agent.yaml",
    ] {
        let server = server(rules);
        let hints: Vec<&str> = server.hints.names().collect();
        let calls = calls(&server);
        for path in [
            "../../docs/policies/read-only.yaml",
            "../../docs/policies/ask-destructive.yaml",
            "../../docs/policies/no-open-world-writes.yaml",
            "../../tests/fixtures/policies/rich.yaml",
        ] {
            let text = std::fs::read_to_string(path).unwrap();
            let policy = Policy::parse(&text, FileId(0), &hints).unwrap();
            let engine = Engine::from_yaml(&server, &policy, None).unwrap();
            let session = SessionFacts::default();
            for (tool, variant, annotations, scopes, principal, described) in &calls {
                let arguments = json!({});
                let call = Call {
                    tool,
                    arguments: Some(&arguments),
                    variant: variant.as_deref(),
                    annotations,
                    scopes,
                    described: *described,
                    principal: principal.as_ref(),
                    session: Some(&session),
                };
                let yaml = policy.decide(&call);
                // Described tools' arguments are not valid here: decide the
                // rest of the call as a row of a table would.
                let cedar = if *described {
                    engine.decide_without_input(&call)
                } else {
                    engine.decide(&call)
                };
                assert_eq!(
                    (yaml.decision, yaml.rule.map(str::to_string)),
                    (cedar.decision, cedar.policies.first().cloned()),
                    "{path} on {rules}: {tool} {variant:?} {annotations:?} {scopes:?} {principal:?}"
                );
                assert!(cedar.policies.len() <= 1);
                compared += 1;
            }
        }
    }
    assert!(compared > 10_000, "{compared}");
}

#[test]
fn what_is_decided_at_load_and_at_the_call_is_what_cedar_decides_over_the_whole_set() {
    let server = test_server();
    let text = format!(
        "{POLICIES}
@id(\"bob-writes\") permit(principal == TestServer::User::\"bob\", action, resource)
  when {{ context.resolution has variant && context.resolution.variant == \"write\" }};
@id(\"scoped\") @ask(\"scope\") permit(principal, action, resource)
  when {{ context.session.tokenScopes.contains(\"files:write\") }};
@id(\"open\") forbid(principal, action, resource) when {{ context.resolution.openWorldHint }};
"
    );
    let engine = load(&server, &text).unwrap();
    let mut compared = 0;
    for (variant, action) in [
        (Some("read"), "read"),
        (Some("write"), "write"),
        (None, "delete"),
    ] {
        let tool = server.tool("files").unwrap();
        let annotations = match variant {
            Some(v) => {
                use mcp_resolve::hints::HintTableExt;
                let v = tool.variants.iter().find(|x| x.name == v).unwrap();
                server.hints.to_annotations(&v.annotations)
            }
            None => {
                use mcp_resolve::hints::HintTableExt;
                server.hints.to_annotations(&tool.annotations)
            }
        };
        let scopes: Vec<String> = match variant {
            Some(v) => tool
                .variants
                .iter()
                .find(|x| x.name == v)
                .unwrap()
                .required_scopes
                .iter()
                .map(|(s, _)| s.clone())
                .collect(),
            None => tool.required_scopes.clone(),
        };
        for path in ["/etc/x", "/tmp/y"] {
            for recursive in [false, true] {
                for sub in [None, Some("alice"), Some("bob")] {
                    for granted in [&[][..], &["files:write"][..]] {
                        let args = json!({"path": path, "action": action, "options": {"recursive": recursive}});
                        let token = Principal {
                            sub: sub.map(str::to_string),
                            client_id: None,
                            scopes: granted.iter().map(|s| s.to_string()).collect(),
                        };
                        let call = Call {
                            principal: Some(&token),
                            ..call("files", &args, variant, &annotations, &scopes)
                        };
                        let planned = engine.decide(&call);
                        let (request, entities) = engine.request(&call).unwrap();
                        let whole = engine.authorize("files", request, &entities);
                        assert_eq!(planned, whole, "{args} {sub:?} {granted:?}");
                        compared += 1;
                    }
                }
            }
        }
    }
    assert_eq!(compared, 72);
    // A resolution not computed at load (other annotations) is decided
    // over the whole set.
    let odd = Annotations::defaults();
    let args = json!({"path": "/tmp/y", "action": "read"});
    let outcome = engine.decide(&call("files", &args, Some("read"), &odd, &[]));
    assert_eq!(outcome.decision, Decision::Deny);
}

#[test]
fn plain_arguments_make_the_request_cedar_for_agents_generator_makes() {
    let mut compared = 0;
    for (rules, tool, cases) in [
        (
            "../../tests/fixtures/policies/test-server.yaml",
            "files",
            vec![
                json!({"path": "/a", "action": "read"}),
                json!({"path": "/a", "action": "write", "count": 3}),
                json!({"path": "", "action": "delete", "options": {}}),
                json!({"path": "x\"y", "action": "read", "options": {"recursive": true}, "count": -9}),
            ],
        ),
        (
            "../../rules/coding-agent.yaml",
            "start_coding_agent",
            vec![
                json!({"task": "t", "mode": "plan"}),
                json!({"task": "t", "mode": "execute", "maxSteps": 5, "dryRun": true, "sandbox": {"network": false}}),
            ],
        ),
    ] {
        let server = server(rules);
        let engine = Engine::from_yaml(
            &server,
            &Policy::parse("version: 1\ndefault: allow\n", FileId(0), &[]).unwrap(),
            None,
        )
        .unwrap();
        let a = Annotations::defaults();
        for arguments in &cases {
            let call = call(tool, arguments, None, &a, &[]);
            assert!(engine.plain(&call), "{arguments}");
            let (ours, _) = engine.request(&call).unwrap();
            let (theirs, _) = engine.generated(&call).unwrap();
            assert_eq!(
                ours.context().unwrap().to_json_value().unwrap(),
                theirs.context().unwrap().to_json_value().unwrap(),
                "{arguments}"
            );
            assert_eq!(ours.to_string(), theirs.to_string(), "{arguments}");
            compared += 1;
        }
    }
    assert_eq!(compared, 6);
    // What the shortcut does not cover goes to the generator.
    let server = server("../../rules/real-server-everything.yaml");
    let engine = Engine::from_yaml(
        &server,
        &Policy::parse("version: 1\ndefault: allow\n", FileId(0), &[]).unwrap(),
        None,
    )
    .unwrap();
    let a = Annotations::defaults();
    let arguments = json!({"message": 3});
    assert!(!engine.plain(&call("echo", &arguments, None, &a, &[])));
}

#[test]
fn a_mistake_in_the_second_file_is_reported_in_that_file() {
    let server = test_server();
    let errors = Engine::load(
        &server,
        &[
            Source {
                file: FileId(0),
                name: "a.cedar",
                text: "@id(\"ok\") permit(principal, action, resource);",
            },
            Source {
                file: FileId(1),
                name: "b.cedar",
                text: "\npermit(principal, action, resource) when { context.resolution.nope };",
            },
        ],
        None,
    )
    .unwrap_err();
    // Cedar reports it once per action the policy applies to.
    assert_eq!(errors.len(), 2, "{errors:?}");
    for error in &errors {
        let span = error.span.unwrap();
        assert_eq!((span.file, span.start), (FileId(1), 44), "{error:?}");
        assert!(
            error.message.starts_with("policy `b.cedar:2`"),
            "{}",
            error.message
        );
    }
}
