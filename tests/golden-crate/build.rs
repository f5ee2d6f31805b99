//! Generates resolvers the way a server crate would: with the Builder.
fn main() {
    for rules in [
        "../../rules/file-server.yaml",
        "../fixtures/codegen/hostile.yaml",
    ] {
        mcp_resolve::Builder::new()
            .rules(rules)
            .compile()
            .unwrap_or_else(|e| {
                e.emit_cargo_errors();
                std::process::exit(1)
            });
    }
}
