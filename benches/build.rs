//! Generates the resolvers the benchmarks compare: `manage_files` from
//! `rules/file-server.yaml`, and synthetic servers of 10, 1,000 and 10,000
//! tools for dispatch cost (one tool in a hundred has variants, so the
//! generated files stay a manageable size; dispatch does not depend on it).

use std::fmt::Write as _;
use std::path::PathBuf;

fn build(rules: &std::path::Path, out_file: &str) {
    mcp_resolve::Builder::new()
        .rules(rules)
        .out_file(out_file)
        .compile()
        .unwrap_or_else(|e| {
            e.emit_cargo_errors();
            std::process::exit(1)
        });
}

fn main() {
    build(
        std::path::Path::new("../rules/file-server.yaml"),
        "file_server.rs",
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    for n in [10usize, 1_000, 10_000] {
        let mut yaml =
            format!("version: 1\nserver: {{ name: synthetic-{n}, version: 1.0.0 }}\ntools:\n");
        for i in 0..n {
            let _ = write!(
                yaml,
                "  - name: tool_{i}\n    inputSchema: {{ type: object, properties: {{ action: {{ type: string }} }} }}\n"
            );
            if i % 100 == 0 {
                yaml.push_str(
                    "    variants:\n      - name: read\n        when: { action: read }\n        annotations: { readOnlyHint: true, destructiveHint: false }\n      - name: write\n        when: { action: write }\n",
                );
            } else {
                yaml.push_str("    annotations: { readOnlyHint: true }\n");
            }
        }
        let rules = out.join(format!("synthetic_{n}.yaml"));
        if std::fs::read_to_string(&rules).ok().as_deref() != Some(yaml.as_str()) {
            let _ = std::fs::write(&rules, &yaml);
        }
        build(&rules, &format!("synthetic_{n}.rs"));
    }
}
