//! `mcp-resolve explain`: what each tool's rules mean, as text, Markdown or
//! an HTML page, with a policy's decisions when one is given.

use super::args::{ExplainArgs, ExplainFormat};
use super::{USAGE, progress, with_server, write_output};

pub(crate) fn run(args: ExplainArgs) -> u8 {
    let ExplainArgs {
        paths,
        tool,
        format,
        output,
        policy,
    } = args;
    let (tool, output) = (tool.as_deref(), output.as_deref());
    with_server(&paths, |project, server| {
        let mut explanation = mcp_resolve::explain::explain(project, server);
        if let Some(name) = tool {
            explanation = match explanation.only_tool(name) {
                Ok(e) => e,
                Err(e) => {
                    progress::finish();
                    eprintln!("error: {e}");
                    return USAGE;
                }
            };
        }
        let text = match format {
            ExplainFormat::Text => explanation.to_text(),
            ExplainFormat::Markdown => explanation.to_markdown(),
            ExplainFormat::Html => explanation.to_html(),
        };
        #[cfg(feature = "policy")]
        let text = match policy {
            Some(policy) => match super::policy::decision_section(&policy, server, tool, format) {
                Ok(section) => {
                    let mut text = text;
                    super::policy::append_section(&mut text, &section, format);
                    text
                }
                Err(code) => return code,
            },
            None => text,
        };
        #[cfg(not(feature = "policy"))]
        if policy.is_some() {
            return super::not_built("explain --policy", "policy");
        }
        write_output(output, &text)
    })
}
