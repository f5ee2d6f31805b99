//! Generates resolvers the way a server crate would: with the Builder. Also
//! generates the random rule sets of the differential test (`tests/differential.rs`).

#[path = "random_rules.rs"]
#[allow(dead_code)]
mod random_rules;

use std::fmt::Write as _;
use std::path::PathBuf;

/// Rule sets with a resolver; at 120 to 240 argument objects per tool this is
/// well over 10,000 cases per run.
const SETS: usize = 40;

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
    random_sets();
}

fn random_sets() {
    println!("cargo:rerun-if-env-changed=MCP_RESOLVE_DIFF_SEED");
    println!("cargo:rerun-if-changed=random_rules.rs");
    let seed = std::env::var("MCP_RESOLVE_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261121u64);
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let dir = out.join("random");
    let _ = std::fs::create_dir_all(&dir);
    let mut rng = random_rules::Rng(seed);
    let mut index = String::new();
    let mut table = String::new();
    let mut made = 0;
    let mut attempt = 0;
    while made < SETS && attempt < SETS * 100 {
        attempt += 1;
        // Every fifth set is large enough to dispatch by perfect hash.
        let text = random_rules::rule_set(&mut rng, attempt, made % 5 == 4);
        let rules = dir.join(format!("set{made}.yaml"));
        if std::fs::write(&rules, &text).is_err() {
            continue;
        }
        // Sets the checker rejects (a variant outside the static bound, an
        // impossible pattern…) have no resolver; skip them.
        let built = mcp_resolve::Builder::new()
            .rules(&rules)
            .out_dir(&dir)
            .out_file(format!("set{made}_resolve.rs"))
            .cargo_instructions(false)
            .compile();
        if built.is_err() {
            continue;
        }
        let _ = writeln!(
            index,
            "pub mod set{made} {{ include!(concat!(env!(\"OUT_DIR\"), \"/random/set{made}_resolve.rs\")); }}"
        );
        let _ = writeln!(
            table,
            "    (concat!(env!(\"OUT_DIR\"), \"/random/set{made}.yaml\"), set{made}::resolve),"
        );
        made += 1;
    }
    let _ = writeln!(
        index,
        "/// Each set's rules file and resolver.\npub static SETS: &[(&str, ResolveFn)] = &[\n{table}];"
    );
    let _ = writeln!(
        index,
        "/// The seed the sets were generated from.\npub const SEED: u64 = {seed};"
    );
    let _ = std::fs::write(out.join("random_sets.rs"), index);
}
