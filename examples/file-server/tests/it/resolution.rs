//! `mcp_resolve_runtime::rmcp::ToolResolution` over the example's generated
//! resolver: capabilities, tools/list, resolve params and call checks.

use file_server::server::resolve;
use mcp_resolve_runtime::rmcp::{ToolResolution, missing_capability, to_error_data};
use mcp_resolve_runtime::{Dialect, EXTENSION_ID, RpcError, VARIANT_EXTENSION_ID};
use rmcp::model::{ErrorCode, ServerCapabilities};
use serde_json::{Value, json};

fn resolution(dialect: Dialect) -> ToolResolution {
    ToolResolution::with_dialect(&resolve::RULES, dialect)
}

#[test]
fn advertises_the_extension_or_the_dialect_and_signature() {
    let caps = resolution(Dialect::Extension)
        .server_config(ServerCapabilities::builder().enable_tools().build())
        .capabilities;
    let caps = serde_json::to_value(caps).unwrap();
    assert_eq!(caps["extensions"][EXTENSION_ID], json!({}));
    assert_eq!(caps["extensions"][VARIANT_EXTENSION_ID], json!({}));
    assert_eq!(caps["experimental"]["signature"], json!({}));
    assert!(caps["tools"].is_object());

    for (dialect, method) in [
        (Dialect::Sep1862, "tools/resolve"),
        (Dialect::Annotations, "tools/annotations"),
    ] {
        let r = resolution(dialect);
        assert_eq!(r.method(), method);
        let mut caps = ServerCapabilities::default();
        r.advertise(&mut caps);
        let caps = serde_json::to_value(caps).unwrap();
        assert!(
            caps["extensions"].get(EXTENSION_ID).is_none(),
            "{dialect}: {caps}"
        );
        assert_eq!(caps["extensions"][VARIANT_EXTENSION_ID], json!({}));
        assert_eq!(caps["experimental"][method], json!({}));
    }
}

#[test]
fn server_info_is_the_rules_server() {
    let config = resolution(Dialect::Extension).server_config(ServerCapabilities::default());
    assert_eq!(config.server_info.name, resolve::SERVER_NAME);
    assert_eq!(config.server_info.version, resolve::SERVER_VERSION);
}

#[test]
fn tools_carry_static_annotations_and_markers_only_when_resolvable() {
    let list = serde_json::to_value(resolution(Dialect::Extension).list_tools()).unwrap();
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, resolve::TOOL_NAMES);
    let signature: Value = serde_json::from_str(resolve::SIGNATURE_JSON).unwrap();
    for (tool, sig) in tools.iter().zip(signature["tools"].as_array().unwrap()) {
        let marked = tool["_meta"][EXTENSION_ID]["resolvable"] == json!(true);
        assert_eq!(marked, sig.get("resolvedVariants").is_some(), "{tool}");
        for hint in mcp_resolve_runtime::CORE_HINTS {
            assert_eq!(
                tool["annotations"][hint], sig["annotations"][hint],
                "{hint}"
            );
        }
        assert_eq!(tool["inputSchema"], sig["inputSchema"]);
    }
}

#[test]
fn resolve_params_answers_in_each_dialect() {
    let params = json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}});
    let ext = resolution(Dialect::Extension)
        .resolve_params(Some(&params))
        .unwrap();
    assert_eq!(
        ext.0,
        json!({"resultType": "complete", "name": "manage_files", "annotations": {
            "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}})
    );
    let sep = resolution(Dialect::Sep1862)
        .resolve_params(Some(&params))
        .unwrap();
    assert_eq!(sep.0["tool"]["resolve"], json!(true));
    assert_eq!(
        sep.0["tool"]["securitySchemes"],
        json!([{"type": "oauth2", "scopes": ["files:read"]}])
    );
    let ann = resolution(Dialect::Annotations)
        .resolve_params(Some(&params))
        .unwrap();
    assert_eq!(ann.0["annotations"]["readOnlyHint"], json!(true));
}

#[test]
fn resolve_params_errors_are_invalid_params() {
    let r = resolution(Dialect::Extension);
    for params in [
        None,
        Some(json!([])),
        Some(json!({"arguments": {}})),
        Some(json!({"name": 3})),
        Some(json!({"name": "nope", "arguments": {}})),
        Some(json!({"name": "list_directory", "arguments": {}})),
        Some(json!({"name": "manage_files", "arguments": {"path": "a", "action": "x"}})),
        Some(json!({"name": "manage_files", "arguments": "read"})),
        Some(json!({"name": "manage_files"})),
    ] {
        let err = r.resolve_params(params.as_ref()).unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{params:?}: {err:?}");
    }
    let err = r
        .resolve_params(Some(
            &json!({"name": "copy_file", "arguments": {"source": ""}}),
        ))
        .unwrap_err();
    assert!(err.data.is_some(), "validation errors travel in data");
    // The extension requires `arguments`; the older drafts default it to `{}`.
    let err = r
        .resolve_params(Some(&json!({"name": "manage_files"})))
        .unwrap_err();
    assert!(
        err.message.contains("params.arguments is required"),
        "{err:?}"
    );
    let err = resolution(Dialect::Sep1862)
        .resolve_params(Some(&json!({"name": "manage_files"})))
        .unwrap_err();
    assert!(
        !err.message.contains("params.arguments is required"),
        "{err:?}"
    );
}

#[test]
fn check_call_validates_every_tool_with_the_full_schema() {
    let r = resolution(Dialect::Extension);
    let args = |v: Value| v.as_object().cloned().unwrap();
    let resolved = r
        .check_call(
            "copy_file",
            Some(&args(json!({"source": "a", "destination": "b"}))),
        )
        .unwrap()
        .unwrap();
    assert_eq!(resolved.variant, Some("keep_existing"));
    // A tool without variants is validated, not resolved.
    assert!(r.check_call("list_directory", None).unwrap().is_none());
    let err = r
        .check_call("list_directory", Some(&args(json!({"path": 1}))))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    let err = r
        .check_call("list_directory", Some(&args(json!({"recursive": true}))))
        .unwrap_err();
    assert_eq!(
        err.code,
        ErrorCode::INVALID_PARAMS,
        "additionalProperties: false"
    );
    let err = r.check_call("rm_rf", None).unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
}

#[test]
fn error_codes_carry_over() {
    assert_eq!(missing_capability().code, ErrorCode(-32021));
    let data = serde_json::to_value(missing_capability().data).unwrap();
    assert_eq!(
        data["requiredCapabilities"]["extensions"][EXTENSION_ID],
        json!({})
    );
    let e = to_error_data(RpcError::new(RpcError::INTERNAL_ERROR, "x", Some(json!(1))));
    assert_eq!(
        (e.code, e.data),
        (ErrorCode::INTERNAL_ERROR, Some(json!(1)))
    );
}

#[test]
fn the_servers_own_checks_refuse_resolve_and_call_alike() {
    let r =
        resolution(Dialect::Extension).with_argument_check(file_server::server::check_arguments);
    for (tool, arguments) in [
        (
            "manage_files",
            json!({"path": "../outside.txt", "action": "read"}),
        ),
        (
            "manage_files",
            json!({"path": "/etc/hostname", "action": "read"}),
        ),
        ("manage_files", json!({"path": "a", "action": "append"})),
        ("copy_file", json!({"source": "a", "destination": "../b"})),
        ("list_directory", json!({"path": "/"})),
    ] {
        let params = json!({"name": tool, "arguments": arguments});
        let e = r.resolve_params(Some(&params)).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{params}");
        let e = r.check_call(tool, arguments.as_object()).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{params}");
    }
    // Calls the server accepts resolve as before.
    let params = json!({"name": "manage_files", "arguments": {"path": "sub/a.txt", "action": "append", "content": "x"}});
    assert!(r.resolve_params(Some(&params)).is_ok());
    // Without the hook the same escape resolves: the hook is what refuses it.
    let params =
        json!({"name": "manage_files", "arguments": {"path": "../outside.txt", "action": "read"}});
    assert!(
        resolution(Dialect::Extension)
            .resolve_params(Some(&params))
            .is_ok()
    );
}
