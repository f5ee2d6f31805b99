//! The crates' layering, as `cargo tree` sees it: what a `build.rs` compiles
//! (this crate) has no command line, async runtime or HTTP stack in its
//! tree; the runtime that generated code depends on knows nothing of the
//! compiler, the host side or the proxy; the host side nothing of the
//! compiler or the proxy (docs/architecture.md, "The crates").

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The names of the packages in `package`'s normal dependency tree (its own
/// name included), with `args` added to `cargo tree`.
fn tree(package: &str, args: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}", "-p", package])
        .args(args)
        .current_dir(crate::repo())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

fn assert_none_of(package: &str, tree: &BTreeSet<String>, forbidden: &[&str]) {
    let found: Vec<&&str> = forbidden.iter().filter(|f| tree.contains(**f)).collect();
    assert!(
        found.is_empty(),
        "{package} depends on {found:?}; its whole tree: {tree:?}"
    );
    assert!(tree.contains(package), "{tree:?}");
}

#[test]
fn a_build_script_compiles_no_cli_runtime_or_http_stack() {
    for args in [&[][..], &["--no-default-features"][..]] {
        let compiler = tree("mcp-resolve", args);
        assert_none_of(
            "mcp-resolve",
            &compiler,
            &[
                "clap",
                "clap_complete",
                "tokio",
                "reqwest",
                "axum",
                "hyper",
                "indicatif",
                "mimalloc",
                "mcp-resolve-proxy",
                "mcp-resolve-cli",
                "rmcp",
                // Signing is the CLI's: a build script fingerprints, never signs.
                "ed25519-dalek",
                "p256",
            ],
        );
        assert!(compiler.contains("mcp-resolve-runtime"), "{compiler:?}");
        assert!(compiler.contains("mcp-resolve-host"), "{compiler:?}");
    }
}

#[test]
fn the_runtime_knows_nothing_of_the_compiler_host_or_proxy() {
    let runtime = tree("mcp-resolve-runtime", &[]);
    assert_none_of(
        "mcp-resolve-runtime",
        &runtime,
        &[
            "mcp-resolve",
            "mcp-resolve-host",
            "mcp-resolve-proxy",
            "mcp-resolve-cli",
            "tokio",
            "sha2",
            "pest",
            "prettyplease",
        ],
    );
    // No file, socket, process, thread or clock of its own (its `framing`
    // feature reads through tokio what a server is handed).
    let files = assert_no_io(&crate::repo().join("crates/runtime/src"));
    assert!(files >= 10, "read {files} files of the runtime");
}

/// The protocol's vocabulary is serde and serde_json (and what they already
/// have in their tree), no other crate of the workspace, and no I/O: what
/// both the runtime's serving and the proxy's core can depend on.
#[test]
fn the_protocol_crate_is_serde_and_nothing_of_the_workspace() {
    let protocol = tree("mcp-resolve-protocol", &[]);
    let allowed = [
        "mcp-resolve-protocol",
        "serde",
        "serde_core",
        "serde_derive",
        "serde_json",
        "itoa",
        "memchr",
        "ryu",
        "zmij",
        "proc-macro2",
        "quote",
        "syn",
        "unicode-ident",
    ];
    let other: Vec<&String> = protocol
        .iter()
        .filter(|p| !allowed.contains(&p.as_str()))
        .collect();
    assert!(
        other.is_empty(),
        "mcp-resolve-protocol depends on {other:?}"
    );
    let files = assert_no_io(&crate::repo().join("crates/protocol/src"));
    assert!(files >= 4, "read {files} files of the protocol crate");
    // The runtime serves generated code and server authors: it has no
    // `protocol` module of its own for the proxy to reach into.
    assert!(!crate::repo().join("crates/runtime/src/protocol").exists());
    let core = tree("mcp-resolve-proxy-core", &["--depth", "1"]);
    assert!(core.contains("mcp-resolve-protocol"), "{core:?}");
}

#[test]
fn the_host_side_knows_nothing_of_the_compiler_or_proxy() {
    let host = tree("mcp-resolve-host", &[]);
    assert_none_of(
        "mcp-resolve-host",
        &host,
        &[
            "mcp-resolve",
            "mcp-resolve-proxy",
            "mcp-resolve-cli",
            "tokio",
            "pest",
            "prettyplease",
        ],
    );
}

#[test]
fn the_policy_crate_knows_nothing_of_transports_the_proxy_or_the_command() {
    let policy = tree("mcp-resolve-policy", &[]);
    assert_none_of(
        "mcp-resolve-policy",
        &policy,
        &[
            "mcp-resolve-proxy",
            "mcp-resolve-cli",
            "clap",
            "tokio",
            "reqwest",
            "axum",
            "hyper",
        ],
    );
    assert!(policy.contains("cedar-policy"), "{policy:?}");
    // It is given facts and answers a decision: no I/O, no clock.
    let files = assert_no_io(&crate::repo().join("crates/policy/src"));
    assert!(files >= 8, "read {files} files of the policy crate");
    // And a build script compiles no Cedar.
    let compiler = tree("mcp-resolve", &[]);
    assert_none_of(
        "mcp-resolve",
        &compiler,
        &["cedar-policy", "cedar-policy-core", "mcp-resolve-policy"],
    );
}

#[test]
fn telemetry_knows_nothing_of_the_proxy_policy_or_the_command() {
    let telemetry = tree("mcp-resolve-telemetry", &[]);
    assert_none_of(
        "mcp-resolve-telemetry",
        &telemetry,
        &[
            "mcp-resolve",
            "mcp-resolve-proxy",
            "mcp-resolve-policy",
            "mcp-resolve-cli",
            "clap",
        ],
    );
    assert!(telemetry.contains("opentelemetry-otlp"), "{telemetry:?}");
    // A build script compiles none of it.
    let compiler = tree("mcp-resolve", &[]);
    assert_none_of(
        "mcp-resolve",
        &compiler,
        &["opentelemetry", "mcp-resolve-telemetry"],
    );
}

#[test]
fn the_language_server_knows_the_compiler_and_nothing_of_the_proxy() {
    // The policy crate for the policy schema (what a policy's completion
    // offers); nothing that serves or transports.
    let lsp = tree("mcp-resolve-lsp", &[]);
    assert_none_of(
        "mcp-resolve-lsp",
        &lsp,
        &[
            "mcp-resolve-proxy",
            "mcp-resolve-telemetry",
            "mcp-resolve-cli",
            "tokio",
            "clap",
        ],
    );
    assert!(
        lsp.contains("lsp-server") && lsp.contains("mcp-resolve"),
        "{lsp:?}"
    );
    let compiler = tree("mcp-resolve", &[]);
    assert_none_of("mcp-resolve", &compiler, &["lsp-server", "lsp-types"]);
}

/// What the proxy's core may not depend on: it decides, the proxy crate
/// does the I/O (docs/architecture.md, "The crates").
const PROXY_CORE_FORBIDDEN: &[&str] = &[
    "tokio",
    "axum",
    "hyper",
    "reqwest",
    "redis",
    "mio",
    "socket2",
    "sse-stream",
    // The telemetry crate's facts (records, spans) are allowed, its
    // exporter (the `export` feature: these crates) is not.
    "opentelemetry",
    "opentelemetry_sdk",
    "opentelemetry-otlp",
    "mcp-resolve-proxy",
    "mcp-resolve-cli",
    "clap",
];

#[test]
fn the_proxy_core_depends_on_no_runtime_transport_or_entropy() {
    let core = tree("mcp-resolve-proxy-core", &[]);
    assert_none_of("mcp-resolve-proxy-core", &core, PROXY_CORE_FORBIDDEN);
    assert!(
        core.contains("mcp-resolve-runtime") && core.contains("mcp-resolve-host"),
        "{core:?}"
    );
    // Its unit and property tests (the session's among them) build
    // without them too.
    let tested = tree("mcp-resolve-proxy-core", &["-e", "dev"]);
    assert!(tested.contains("proptest"), "{tested:?}");
    assert_none_of("mcp-resolve-proxy-core", &tested, PROXY_CORE_FORBIDDEN);
    // No entropy of its own: `getrandom` is in its tree only below the
    // host's keys and the validator's hash seeds, never a dependency of the
    // core itself (ids and nonces are given to it).
    let direct = tree("mcp-resolve-proxy-core", &["--depth", "1"]);
    assert!(!direct.contains("getrandom"), "{direct:?}");
    // Nor does its source reach for the operating system itself.
    let files = assert_no_io(&crate::repo().join("crates/proxy-core/src"));
    assert!(files >= 20, "read {files} files of the proxy's core");
}

/// The proxy's session (the state machine every transport drives) is the
/// core's: the proxy crate has none of its own, and re-exports the core's.
#[test]
fn the_proxy_session_is_the_cores() {
    let repo = crate::repo();
    assert!(repo.join("crates/proxy-core/src/session/mod.rs").is_file());
    assert!(!repo.join("crates/proxy/src/session").exists());
    assert!(!repo.join("crates/proxy/src/session.rs").exists());
    let lib = std::fs::read_to_string(repo.join("crates/proxy/src/lib.rs")).unwrap();
    assert!(lib.contains("pub use mcp_resolve_proxy_core::session;"));
}

/// No crate's top-level modules import each other in a circle (through
/// `crate::`, comments aside): in the proxy crate, the transports use the
/// core's session and the adapters, never the other way round.
#[test]
fn no_crate_has_an_import_circle() {
    let repo = crate::repo();
    let mut sources = vec![repo.join("src")];
    for entry in std::fs::read_dir(repo.join("crates")).unwrap() {
        sources.push(entry.unwrap().path().join("src"));
    }
    let mut modules = 0;
    for src in &sources {
        let uses = top_level_uses(src);
        modules += uses.len();
        assert_acyclic(&uses);
    }
    assert!(modules >= 60, "read {modules} modules");
}

/// Each top-level module of the crate whose source is `src` (a file or a
/// directory; the crate root aside) and the top-level modules its code
/// names through `crate::`.
fn top_level_uses(src: &std::path::Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut stack = vec![src.to_path_buf()];
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap();
            let first = relative.components().next().unwrap();
            let module = first.as_os_str().to_str().unwrap().trim_end_matches(".rs");
            if module == "lib" || module == "main" {
                continue;
            }
            let used = uses.entry(module.to_string()).or_default();
            used.extend(crate_paths(&path).into_iter().filter(|name| name != module));
        }
    }
    uses
}

/// The names `path`'s code (its comments aside) reaches through `crate::`.
fn crate_paths(path: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            let name: String = line[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// Panics with the circle when `uses` has one: a depth-first walk never
/// meets a module on its own path.
fn assert_acyclic(uses: &BTreeMap<String, BTreeSet<String>>) {
    fn visit<'a>(
        module: &'a str,
        uses: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|m| *m == module) {
            panic!(
                "an import cycle: {}",
                path[at..].join(" → ") + " → " + module
            );
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for target in uses.get(module).into_iter().flatten() {
            visit(target, uses, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in uses.keys() {
        visit(module, uses, &mut Vec::new(), &mut done);
    }
}

/// The compiler's `internals` are for tests, benchmarks and fuzz targets:
/// every library and the command use its documented API.
#[test]
fn no_library_or_command_uses_the_compilers_internals() {
    let repo = crate::repo();
    let mut dirs = vec![repo.join("src")];
    for entry in std::fs::read_dir(repo.join("crates")).unwrap() {
        let crate_dir = entry.unwrap().path();
        if crate_dir.file_name().is_some_and(|n| n != "compiler") {
            dirs.push(crate_dir.join("src"));
        }
    }
    let mut files = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files += 1;
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    !text.contains("mcp_resolve::internals"),
                    "{} uses the compiler's internals",
                    path.display()
                );
            }
        }
    }
    assert!(files >= 100, "read {files} files");
}

/// Asserts that no `.rs` file under `dir` (a `tests` directory aside) uses
/// the standard library's I/O, threads, environment or clocks, or the
/// operating system's entropy; the number of files read.
fn assert_no_io(dir: &std::path::Path) -> usize {
    let mut stack = vec![dir.to_path_buf()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "tests") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for word in [
                "std::fs",
                "std::net",
                "std::process",
                "std::env",
                "std::thread",
                "getrandom",
                "SystemTime::now",
                "Instant::now",
            ] {
                assert!(
                    !text.contains(word),
                    "{} uses `{word}`: it does no I/O and reads no clock",
                    path.display()
                );
            }
        }
    }
    files
}

#[test]
fn only_the_command_knows_clap() {
    let proxy = tree("mcp-resolve-proxy", &[]);
    assert_none_of(
        "mcp-resolve-proxy",
        &proxy,
        &["clap", "mcp-resolve-cli", "indicatif"],
    );
}

/// The compiler's modules by layer, lowest first, each layer a directory of
/// `src/`: a module may use its own layer and those below, never one above;
/// and no two modules use each other, directly or through others
/// (docs/architecture.md, "The compiler").
const LAYERS: &[(&str, &[&str])] = &[
    (
        "util",
        &["par", "regex_cache", "suggest", "source", "markup"],
    ),
    ("model", &["hints", "ast", "ir", "diagnostic"]),
    ("semantics", &["schema", "eval"]),
    ("phases", &["parse", "lower", "check", "analysis"]),
    ("driver", &["project"]),
    (
        "backends",
        &[
            "resolve",
            "emit",
            "codegen",
            "typescript",
            "python",
            "matcher",
            "diff",
            "explain",
            "format",
            "import",
            "builder",
            "registry",
            "rules_schema",
        ],
    ),
];

/// Items the crate root re-exports, by the module that defines them.
const REEXPORTS: &[(&str, &str)] = &[
    ("load", "project"),
    ("load_str", "project"),
    ("load_with", "project"),
    ("LoadError", "project"),
    ("LoadOptions", "project"),
    ("Project", "project"),
    ("Stage", "project"),
    ("Builder", "builder"),
    ("Resolver", "resolve"),
    ("AnalysisLimits", "analysis"),
];

/// Each module of the compiler (a file or directory in a layer's directory,
/// which must be the layer `LAYERS` puts it in) and the modules its code
/// (not its comments) names through `crate::`.
fn module_uses() -> BTreeMap<String, BTreeSet<String>> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = crate::repo().join("crates/compiler/src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let parts: Vec<&str> = relative
            .components()
            .map(|c| c.as_os_str().to_str().unwrap())
            .collect();
        // The crate root and the layers' own `mod.rs` only declare modules.
        let (layer, module) = match parts.as_slice() {
            ["lib.rs"] | [_, "mod.rs"] => continue,
            [layer, module, ..] => (*layer, module.trim_end_matches(".rs")),
            _ => panic!("{} is in no layer's directory", relative.display()),
        };
        let declared = LAYERS
            .iter()
            .find(|(_, modules)| modules.contains(&module))
            .map(|(name, _)| *name);
        assert_eq!(
            declared,
            Some(layer),
            "{} is in `{layer}/`, LAYERS puts `{module}` in {declared:?}",
            relative.display()
        );
        let used = uses.entry(module.to_string()).or_default();
        for name in crate_paths(&file) {
            let target = REEXPORTS
                .iter()
                .find(|(item, _)| *item == name)
                .map_or(name.as_str(), |(_, module)| module);
            if target != module {
                used.insert(target.to_string());
            }
        }
    }
    uses
}

#[test]
fn the_compilers_modules_never_import_upward_or_in_a_circle() {
    let layer_of = |module: &str| {
        LAYERS
            .iter()
            .position(|(_, modules)| modules.contains(&module))
            .unwrap_or_else(|| panic!("module `{module}` is in no layer of LAYERS"))
    };
    let uses = module_uses();
    assert!(uses.len() >= 25, "{uses:?}");
    for (module, used) in &uses {
        for target in used {
            assert!(
                layer_of(target) <= layer_of(module),
                "`{module}` ({}) uses `{target}` ({}), a layer above it",
                LAYERS[layer_of(module)].0,
                LAYERS[layer_of(target)].0
            );
        }
    }
    assert_acyclic(&uses);
}
