//! The rules format as a JSON Schema (via schemars), for editors:
//! `mcp-resolve schema`. The decoder in `parse::decode` is the authority; a
//! test keeps the two in step on every bundled and fixture file.

#![allow(dead_code)]

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// An mcp-resolve rules file: which argument patterns of each tool select which annotation variant.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcp-resolve rules file")]
struct RulesFile {
    /// The rules format version; always 1.
    #[schemars(range(min = 1, max = 1))]
    version: u64,
    /// The server the tools belong to (required in at least one file of a server).
    server: Option<ServerInfo>,
    /// Extra boolean hints, by wire name.
    hints: Option<BTreeMap<String, HintDecl>>,
    /// The server's tools.
    tools: Vec<Tool>,
}

/// `serverInfo` of the server.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ServerInfo {
    /// The server name.
    name: String,
    /// The server version.
    version: String,
}

/// An extra boolean hint.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HintDecl {
    /// The conservative value.
    worst: bool,
    /// The value when omitted.
    default: bool,
}

/// A tool.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Tool {
    /// Tool name: 1–128 characters of `[A-Za-z0-9_.-]`.
    name: String,
    /// Human-readable title.
    title: Option<String>,
    /// Description for the model.
    description: Option<String>,
    /// The tool's input JSON Schema (an object schema), inline.
    input_schema: Option<Value>,
    /// The input JSON Schema in a file, relative to this rules file.
    input_schema_file: Option<String>,
    /// The tool's output JSON Schema (an object schema), listed verbatim.
    output_schema: Option<Value>,
    /// Static annotations: the worst case, advertised by tools/list. Derived when omitted.
    annotations: Option<ToolAnnotations>,
    /// OAuth scopes the tool may need. The union of the variants' when omitted.
    required_scopes: Option<Vec<String>>,
    /// Variants; the first whose `when` matches gives the resolved annotations.
    variants: Option<Vec<Variant>>,
    /// Icons for the tool, listed verbatim.
    icons: Option<Vec<Icon>>,
    /// Execution properties (`taskSupport`), listed verbatim.
    execution: Option<Execution>,
    /// Metadata, listed verbatim.
    #[serde(rename = "_meta")]
    meta: Option<serde_json::Map<String, Value>>,
    /// SEP-3140 trust labels no hint carries, for the tool's signed
    /// declaration (`mcp-resolve manifest`, the proxy's `--sign-key`).
    trust: Option<TrustLabels>,
}

/// The SEP-3140 labels a tool's hints do not give (`effect`, `idempotent`
/// and the rest of `egress` come from its annotations). An absent label is
/// the most restrictive.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TrustLabels {
    /// How sensitive the data it handles is.
    data_sensitivity: Option<DataSensitivity>,
    /// Whether its effect can be undone.
    reversible: Option<bool>,
    /// Where data goes when it reaches the world (`openWorldHint`).
    egress: Option<Egress>,
}

/// `trust.dataSensitivity`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum DataSensitivity {
    Public,
    Internal,
    Confidential,
    Secret,
}

/// `trust.egress`: the operator's own network, or anywhere.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Egress {
    Internal,
    External,
}

/// A tool's static annotations: boolean hints, and a display `title`.
#[derive(Deserialize, JsonSchema)]
struct ToolAnnotations {
    /// A display title for the tool (MCP `ToolAnnotations.title`).
    title: Option<String>,
    #[serde(flatten)]
    hints: BTreeMap<String, bool>,
}

/// An icon (MCP `Icon`).
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Icon {
    /// The icon's URI (`https:` or `data:`).
    src: String,
    /// Its MIME type.
    mime_type: Option<String>,
    /// Sizes, such as `48x48` or `any`.
    sizes: Option<Vec<String>>,
    /// The theme it is designed for (`light` or `dark`).
    theme: Option<String>,
}

/// Execution properties of a tool.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Execution {
    /// Whether the tool may be called as a task.
    task_support: Option<TaskSupport>,
}

/// `execution.taskSupport`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum TaskSupport {
    Forbidden,
    Optional,
    Required,
}

/// An annotation variant.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Variant {
    /// Variant name, unique in the tool.
    name: String,
    /// The argument pattern; omitted or `{}` matches every call.
    when: Option<When>,
    /// Hints that differ from the tool's static annotations.
    annotations: Option<BTreeMap<String, bool>>,
    /// Scopes a call resolving here needs; the tool's when omitted.
    required_scopes: Option<Vec<String>>,
}

/// A condition: a mapping of argument paths to matchers (all must hold), a
/// sequence of such mappings (any may hold), or an expression string.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum When {
    Expression(String),
    All(BTreeMap<String, Matcher>),
    Any(Vec<BTreeMap<String, Matcher>>),
}

/// A matcher: a scalar (`const`), a list of scalars (`enum`), or keywords.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum Matcher {
    Scalar(Scalar),
    List(Vec<Scalar>),
    Keywords(Box<Keywords>),
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum Scalar {
    Null(()),
    Bool(bool),
    Number(f64),
    String(String),
}

/// JSON Schema keywords (a subset), or `absent`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Keywords {
    /// The value equals this.
    #[serde(rename = "const")]
    const_: Option<Value>,
    /// The value is one of these.
    #[serde(rename = "enum")]
    enum_: Option<Vec<Value>>,
    /// The value has this JSON type (or one of these).
    #[serde(rename = "type")]
    type_: Option<TypeNames>,
    /// A string value contains a match of this regex.
    pattern: Option<String>,
    /// A string value has at least this many characters.
    min_length: Option<u64>,
    /// A string value has at most this many characters.
    max_length: Option<u64>,
    /// A number value is at least this.
    minimum: Option<f64>,
    /// A number value is at most this.
    maximum: Option<f64>,
    /// A number value is greater than this.
    exclusive_minimum: Option<f64>,
    /// A number value is less than this.
    exclusive_maximum: Option<f64>,
    /// The value does not match this.
    not: Option<Box<Keywords>>,
    /// The value matches at least one of these.
    any_of: Option<Vec<Keywords>>,
    /// The value matches all of these.
    all_of: Option<Vec<Keywords>>,
    /// An array value has at least this many items.
    min_items: Option<u64>,
    /// An array value has at most this many items.
    max_items: Option<u64>,
    /// Every item of an array value matches this.
    items: Option<Box<Keywords>>,
    /// Some item of an array value matches this.
    contains: Option<Box<Keywords>>,
    /// Each named property of an object value, when present, matches its keywords.
    properties: Option<BTreeMap<String, Keywords>>,
    /// An object value has these properties.
    required: Option<Vec<String>>,
    /// `true`: the argument is absent; `false`: present with any value.
    absent: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum TypeNames {
    One(JsonType),
    Many(Vec<JsonType>),
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum JsonType {
    Null,
    Boolean,
    Object,
    Array,
    Number,
    Integer,
    String,
}

/// The JSON Schema of the rules format, pretty-printed with a trailing newline.
pub fn rules_schema() -> String {
    let schema = schemars::schema_for!(RulesFile);
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}
