//! The signature document (SPEC §8): the IR written as the runtime's typed
//! [`SignatureDocument`], fingerprinted.

use mcp_resolve_runtime::signature::{
    ServerInfo, SignatureDocument, VariantCondition, VariantEntry,
};
use serde_json::Value;

use crate::hints::HintTableExt;
use crate::ir::Server;
use crate::schema::patterns::argument_patterns;

/// Builds the signature document, fingerprint included. The server must have
/// passed `check`: a condition too large to write as patterns (reported there
/// as `pattern-too-complex`) contributes no entries.
pub fn signature_document(server: &Server) -> SignatureDocument {
    let hints = &server.hints;
    let tools = server
        .tools
        .iter()
        .map(|tool| {
            let mut t = tool.to_model(hints);
            if tool.resolvable {
                let entries = tool
                    .variants
                    .iter()
                    .flat_map(|v| {
                        let annotations = hints.to_annotations(&v.annotations);
                        let scopes = v.scopes();
                        argument_patterns(&v.when)
                            .unwrap_or_default()
                            .into_iter()
                            .map(move |argument_patterns| VariantEntry {
                                name: v.name.clone(),
                                when: VariantCondition { argument_patterns },
                                annotations: annotations.clone(),
                                required_scopes: scopes.clone(),
                            })
                    })
                    .collect();
                t.resolved_variants = Some(entries);
            }
            t
        })
        .collect();
    SignatureDocument {
        server_info: Some(ServerInfo {
            name: server.name.clone(),
            version: server.version.clone(),
        }),
        tools,
        prompts: Vec::new(),
        resources: Vec::new(),
        resource_templates: Vec::new(),
        fingerprint: None,
    }
    .finish()
}

/// The signature document as JSON, fingerprint included.
pub fn signature(server: &Server) -> Value {
    signature_document(server).to_value()
}

pub use mcp_resolve_runtime::signature::{fingerprint, to_pretty};
