//! The policy decision of one `tools/call` with 50 policies: Cedar (the
//! engine the proxy decides with) beside the YAML form's first-match
//! engine, in the same run. Cedar's figure is split into building the
//! request (cedar-for-agents' typing of the arguments, the resolution and
//! session records) and authorizing it.

#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_resolve::source::FileId;
use mcp_resolve_proxy::policy::cedar::{Engine, Source};
use mcp_resolve_proxy::policy::{Call, Policy, Principal};
use mcp_resolve_runtime::Annotations;
use serde_json::json;

/// 50 Cedar policies about the file server's one tool: principal-scoped
/// permits, forbids on the arguments, asks on variants and scopes, permits
/// on the token's scopes.
fn cedar_policies() -> String {
    let mut text = String::new();
    for i in 0..20 {
        text.push_str(&format!(
            "@id(\"user{i}-reads\") permit(principal == FileServer::User::\"user{i}\", action == FileServer::Action::\"manage_files\", resource) when {{ context.resolution.readOnlyHint }};\n"
        ));
    }
    for i in 0..10 {
        text.push_str(&format!(
            "@id(\"no-secret{i}\") forbid(principal, action == FileServer::Action::\"manage_files\", resource) when {{ context.input.path like \"/secret{i}/*\" }};\n"
        ));
    }
    for i in 0..10 {
        text.push_str(&format!(
            "@id(\"ask{i}\") @ask(\"appends\") permit(principal, action, resource) when {{ context.resolution has variant && context.resolution.variant == \"append\" && context.resolution.requiredScopes.contains(\"s{i}\") }};\n"
        ));
    }
    for i in 0..10 {
        text.push_str(&format!(
            "@id(\"scoped{i}\") permit(principal, action, resource) when {{ context.resolution.readOnlyHint && context.session.tokenScopes.contains(\"files:read{i}\") }};\n"
        ));
    }
    text
}

/// 50 YAML rules of the same kinds.
fn yaml_policy() -> String {
    let mut text = String::from("version: 1\ndefault: deny\nrules:\n");
    for i in 0..20 {
        text.push_str(&format!(
            "  - name: user{i}-reads\n    when: {{ principal: user{i}, readOnlyHint: true }}\n    decision: allow\n"
        ));
    }
    for i in 0..10 {
        text.push_str(&format!(
            "  - name: no-admin{i}\n    when: {{ scopes: [admin{i}] }}\n    decision: deny\n"
        ));
    }
    for i in 0..10 {
        text.push_str(&format!(
            "  - name: ask{i}\n    when: {{ variant: append, scopes: [s{i}] }}\n    decision: ask\n"
        ));
    }
    for i in 0..10 {
        text.push_str(&format!(
            "  - name: client{i}\n    when: {{ client: client{i}, readOnlyHint: true }}\n    decision: allow\n"
        ));
    }
    text
}

fn policy(c: &mut Criterion) {
    let project = mcp_resolve::load(&["../rules/file-server.yaml".into()]).unwrap();
    let server = project.single_server().unwrap();
    let cedar_text = cedar_policies();
    let cedar = Engine::load(
        server,
        &[Source {
            file: FileId(0),
            name: "bench.cedar",
            text: &cedar_text,
        }],
        None,
    )
    .unwrap();
    assert_eq!(cedar.policies().len(), 50);
    let hints: Vec<&str> = server.hints.names().collect();
    let yaml = Policy::parse(&yaml_policy(), FileId(0), &hints).unwrap();
    assert_eq!(yaml.rules.len(), 50);
    let translated = Engine::from_yaml(server, &yaml, None).unwrap();

    // A call as the proxy judges it: resolved by the rules' matcher.
    let arguments = json!({"path": "/home/notes.txt", "action": "read"});
    let matcher =
        mcp_resolve::matcher::compile(server, mcp_resolve_runtime::Dialect::Extension).unwrap();
    let outcome = matcher
        .outcome("manage_files", &arguments)
        .unwrap()
        .unwrap();
    let resolution = outcome.resolution();
    let annotations: Annotations = resolution.annotations.clone();
    let scopes = resolution.required_scopes.clone();
    let token = Principal {
        sub: Some("user7".into()),
        client_id: Some("host".into()),
        scopes: ["files:read".to_string()].into_iter().collect(),
    };
    let call = Call {
        tool: "manage_files",
        arguments: Some(&arguments),
        variant: resolution.variant.as_deref(),
        annotations: &annotations,
        scopes: &scopes,
        described: true,
        principal: Some(&token),
        session: None,
    };
    let mut group = c.benchmark_group("policy-50");
    group.bench_function("yaml first match (reference)", |b| {
        b.iter(|| yaml.decide(black_box(&call)).decision)
    });
    group.bench_function("cedar decide (request + authorize)", |b| {
        b.iter(|| cedar.decide(black_box(&call)).decision)
    });
    let (request, entities) = cedar.request(&call).unwrap();
    group.bench_function("cedar request", |b| {
        b.iter(|| cedar.request(black_box(&call)).unwrap())
    });
    group.bench_function("cedar authorize", |b| {
        b.iter(|| {
            cedar
                .authorize("manage_files", black_box(request.clone()), &entities)
                .decision
        })
    });
    group.bench_function("yaml translated to cedar, decide", |b| {
        b.iter(|| translated.decide(black_box(&call)).decision)
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = policy
}
criterion_main!(benches);
