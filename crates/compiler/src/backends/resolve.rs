//! The library resolver (SPEC §7): validation against the full inputSchema,
//! then first-match over the variants. Pure: no I/O, no clock, no randomness.

use std::collections::HashMap;

use mcp_resolve_runtime::{ArgumentValidator, Dialect, Resolution, RpcError};
use serde_json::Value;

use crate::eval::{Regexes, eval_cond};
use crate::hints::HintTableExt;
use crate::ir::{PredKind, Server, Tool};
use crate::regex_cache::compile_pattern;

/// A resolver for one server; compile once, resolve many times.
pub struct Resolver<'s> {
    server: &'s Server,
    validators: HashMap<&'s str, ArgumentValidator>,
    regexes: Regexes,
}

/// How one variant fared, for `--explain`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The variant.
    pub variant: String,
    /// Its condition, CEL-like.
    pub condition: String,
    /// Whether it matched.
    pub matched: bool,
}

/// A tool whose `inputSchema` does not compile (`check` reports it as
/// `invalid-schema`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("inputSchema of tool `{tool}`: {message}")]
pub struct ResolverError {
    /// The tool.
    pub tool: String,
    /// Why its schema does not compile.
    pub message: String,
}

impl<'s> Resolver<'s> {
    /// Compiles the validators and regexes of every tool. Fails with a message
    /// when a schema does not compile (which `check` reports as `invalid-schema`).
    pub fn new(server: &'s Server) -> Result<Self, ResolverError> {
        let mut validators = HashMap::new();
        let mut regexes = Regexes::new();
        for tool in &server.tools {
            let v = ArgumentValidator::new(&tool.input_schema).map_err(|e| ResolverError {
                tool: tool.name.clone(),
                message: e.to_string(),
            })?;
            validators.insert(tool.name.as_str(), v);
            for variant in &tool.variants {
                variant.when.walk(&mut |_, pred| {
                    if let Some(pred) = pred {
                        pred.walk_deep(&mut |p| {
                            if let PredKind::Pattern(re) = &p.kind
                                && let Ok(r) = compile_pattern(re)
                            {
                                regexes.insert(re.clone(), r);
                            }
                        });
                    }
                });
            }
        }
        Ok(Resolver {
            server,
            validators,
            regexes,
        })
    }

    /// The server resolved against.
    pub fn server(&self) -> &'s Server {
        self.server
    }

    fn resolvable_tool(&self, name: &str, arguments: &Value) -> Result<&'s Tool, RpcError> {
        let tool = self
            .server
            .tool(name)
            .ok_or_else(|| RpcError::unknown_tool(name))?;
        if !tool.resolvable {
            return Err(RpcError::not_resolvable(name));
        }
        match self.validators.get(name) {
            Some(v) => v.validate(name, arguments)?,
            None => {
                return Err(RpcError::new(
                    RpcError::INTERNAL_ERROR,
                    format!("no validator for tool {name}"),
                    None,
                ));
            }
        }
        Ok(tool)
    }

    /// Resolves one call.
    pub fn resolve(&self, name: &str, arguments: &Value) -> Result<Resolution, RpcError> {
        let tool = self.resolvable_tool(name, arguments)?;
        let hints = &self.server.hints;
        let matched = tool
            .variants
            .iter()
            .find(|v| eval_cond(&v.when, arguments, &self.regexes));
        Ok(match matched {
            Some(v) => Resolution {
                tool: tool.name.clone(),
                variant: Some(v.name.clone()),
                annotations: hints.to_annotations(&v.annotations),
                required_scopes: v.scopes(),
            },
            None => Resolution {
                tool: tool.name.clone(),
                variant: None,
                annotations: hints.to_annotations(&tool.annotations),
                required_scopes: tool.required_scopes.clone(),
            },
        })
    }

    /// Resolves one call and shapes the JSON-RPC `result` for `dialect`.
    pub fn resolve_result(
        &self,
        name: &str,
        arguments: &Value,
        dialect: Dialect,
    ) -> Result<Value, RpcError> {
        let resolution = self.resolve(name, arguments)?;
        let tool = self
            .server
            .tool(name)
            .map(|t| t.to_model(&self.server.hints).list_entry(dialect));
        Ok(dialect.result(&tool.unwrap_or(Value::Null), &resolution))
    }

    /// Every variant tried, in order, up to the first that matched.
    pub fn explain(&self, name: &str, arguments: &Value) -> Result<Vec<Step>, RpcError> {
        let tool = self.resolvable_tool(name, arguments)?;
        let mut steps = Vec::new();
        for v in &tool.variants {
            let matched = eval_cond(&v.when, arguments, &self.regexes);
            steps.push(Step {
                variant: v.name.clone(),
                condition: v.when.to_string(),
                matched,
            });
            if matched {
                break;
            }
        }
        Ok(steps)
    }
}
