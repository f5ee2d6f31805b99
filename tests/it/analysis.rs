//! Pattern analysis: every fixture in `tests/fixtures/analysis` renders its
//! expected analysis (per tool: exhaustive or not; per variant: reachable or
//! not, and what covers it) and diagnostics, and every example the analysis
//! prints is checked against the inputSchema and the library resolver.

use crate::common;

use mcp_resolve::diagnostic::{Code, Severity, render_human};
use mcp_resolve::internals::analysis::{Analyzer, Coverage, Reach, ToolAnalysis, summary};
use mcp_resolve::ir::Server;
use mcp_resolve::resolve::Resolver;
use mcp_resolve_runtime::ArgumentValidator;
use serde_json::Value;

/// Checks one claimed example: valid against the tool's inputSchema, and
/// resolving to `expected` (`None`: no variant).
fn check_example(server: &Server, tool: &str, example: &Value, expected: Option<&str>) {
    let t = server.tool(tool).unwrap();
    ArgumentValidator::new(&t.input_schema)
        .unwrap()
        .validate(tool, example)
        .unwrap_or_else(|e| panic!("{tool}: example {example} is invalid: {e:?}"));
    let resolver = Resolver::new(server).unwrap();
    let got = resolver.resolve(tool, example).unwrap();
    assert_eq!(
        got.variant.as_deref(),
        expected,
        "{tool}: example {example}"
    );
}

/// The JSON between "e.g. `" and the next "`" in a help line.
fn printed_example(help: &str) -> Option<Value> {
    let start = help.find("e.g. `")? + "e.g. `".len();
    let end = start + help[start..].find('`')?;
    Some(serde_json::from_str(&help[start..end]).unwrap())
}

#[test]
fn analysis_fixtures_match_their_expected_analysis() {
    let mut paths = common::files("tests/fixtures/analysis", "yaml");
    paths.extend(common::files("tests/fixtures/analysis", "rules"));
    assert!(paths.len() >= 25, "fixtures went missing: {}", paths.len());
    let (mut exhaustive, mut missing, mut unreachable, mut inconclusive) = (0, 0, 0, 0);
    for path in paths {
        let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
        let rendered = render_human(&project.sources, &project.diagnostics, false);
        assert!(
            project
                .diagnostics
                .iter()
                .all(|d| d.severity != Severity::Error),
            "{}:\n{rendered}",
            path.display()
        );
        let server = &project.servers[0];
        let mut out = String::new();
        let mut analyzer = Analyzer::new();
        for tool in &server.tools {
            let Some(analysis) = analyzer.analyze_tool(tool) else {
                continue;
            };
            out.push_str(&summary(tool, &analysis));
            match &analysis {
                ToolAnalysis::Inconclusive(_) => inconclusive += 1,
                ToolAnalysis::Done { reach, coverage } => {
                    match coverage {
                        Coverage::Exhaustive => exhaustive += 1,
                        Coverage::Missing(obj) => {
                            missing += 1;
                            check_example(server, &tool.name, obj, None);
                        }
                    }
                    for (i, r) in reach.iter().enumerate() {
                        if let Reach::Unreachable {
                            covered_by,
                            example,
                        } = r
                        {
                            unreachable += 1;
                            let (obj, j) = example.as_ref().expect("an example");
                            assert!(covered_by.contains(j) && *j < i);
                            check_example(server, &tool.name, obj, Some(&tool.variants[*j].name));
                        }
                    }
                }
            }
        }
        out.push('\n');
        out.push_str(&rendered);
        common::expect_file(&path.with_extension("expected"), &out);

        // What the diagnostics print is what was checked.
        for d in &project.diagnostics {
            let tool = d.tool.as_deref().unwrap();
            let example = d.help.as_deref().and_then(printed_example);
            match d.code {
                Code::NonExhaustive => {
                    check_example(server, tool, &example.unwrap(), None);
                }
                Code::UnreachableVariant => {
                    if let Some(example) = example {
                        let help = d.help.as_deref().unwrap();
                        let name = help
                            .rsplit_once("resolves to `")
                            .and_then(|(_, rest)| rest.split_once('`'))
                            .map(|(n, _)| n)
                            .unwrap();
                        check_example(server, tool, &example, Some(name));
                    }
                }
                _ => {}
            }
        }
    }
    // The fixtures exercise every outcome.
    assert!(exhaustive >= 8, "exhaustive {exhaustive}");
    assert!(missing >= 8, "non-exhaustive {missing}");
    assert!(unreachable >= 8, "unreachable {unreachable}");
    assert!(inconclusive >= 1, "inconclusive {inconclusive}");
}

/// Each limit, when hit, makes the analysis say so instead of guessing, and
/// nothing is claimed for the tool.
#[test]
fn every_limit_ends_in_inconclusive_not_a_claim() {
    use mcp_resolve::internals::analysis::Limits;
    let path = std::path::PathBuf::from("tests/fixtures/analysis/overlapping-regexes.yaml");
    let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
    let tool = &project.servers[0].tools[0];
    let cases = [
        (
            Limits {
                budget: 20,
                ..Limits::default()
            },
            "search budget",
        ),
        (
            Limits {
                max_string_states: 8,
                ..Limits::default()
            },
            "more than 8 automaton states",
        ),
        (
            Limits {
                max_regions: 2,
                ..Limits::default()
            },
            "more than 2 regions",
        ),
        (
            Limits {
                run_budget: 1000,
                ..Limits::default()
            },
            "budget of this run is spent",
        ),
    ];
    for (limits, reason) in cases {
        let analysis = Analyzer::with_limits(limits).analyze_tool(tool).unwrap();
        match analysis {
            ToolAnalysis::Inconclusive(why) => assert!(why.contains(reason), "{why}"),
            other => panic!("expected inconclusive ({reason}), got {other:?}"),
        }
    }
    // A condition whose DNF is too large.
    let text = "version: 1\nserver: { name: s, version: '1' }\ntools:\n  - name: t\n    inputSchema: { type: object, properties: { a: { type: integer }, b: { type: integer }, c: { type: integer } } }\n    variants:\n      - { name: v, when: '!((a == 1 || b == 1) && (a == 2 || c == 2) && (b == 3 || c == 3))' }\n";
    let project = mcp_resolve::load_str("rows.yaml", text);
    let limits = Limits {
        max_rows: 2,
        ..Limits::default()
    };
    let analysis = Analyzer::with_limits(limits)
        .analyze_tool(&project.servers[0].tools[0])
        .unwrap();
    assert!(
        matches!(&analysis, ToolAnalysis::Inconclusive(why) if why.contains("more than 2 alternatives")),
        "{analysis:?}"
    );
    // With the default limits the same tool is analyzed.
    assert!(matches!(
        Analyzer::new().analyze_tool(&project.servers[0].tools[0]),
        Some(ToolAnalysis::Done { .. })
    ));
}

/// Tools analysed on several threads give, to the unit of the run's budget,
/// what one analyzer going through the tools in order gives: whichever tool
/// first needs a pattern's DFA pays for it, and once the run's budget is
/// spent every later tool is inconclusive, whatever the thread count.
#[test]
fn analysis_on_threads_matches_one_analyzer_in_order_for_every_run_budget() {
    use mcp_resolve::internals::analysis::{Limits, analyze_server_with};
    // Tools sharing patterns (a DFA built once per run), tools with their
    // own, and tools needing no DFA at all, interleaved.
    let mut text = String::from("version: 1\nserver: { name: s, version: '1' }\ntools:\n");
    for i in 0..24 {
        let variants = match i % 4 {
            0 => "      - { name: tmp, when: { path: { pattern: \"^/tmp/\" } } }\n      - { name: logs, when: { path: { pattern: \"\\\\.log$\" } } }\n".to_string(),
            1 => format!("      - {{ name: own, when: {{ path: {{ pattern: \"^/own{i}/[a-z]+\\\\.(txt|md)$\" }} }} }}\n      - {{ name: tmp, when: {{ path: {{ pattern: \"^/tmp/\" }} }} }}\n"),
            2 => "      - { name: a, when: { path: a } }\n      - { name: b, when: { path: b } }\n".to_string(),
            _ => format!("      - {{ name: wide, when: {{ path: {{ pattern: \"^(/[a-z]{{1,{}}})+/x$\" }} }} }}\n", 2 + i % 5),
        };
        text.push_str(&format!(
            "  - name: t{i}\n    inputSchema: {{ type: object, properties: {{ path: {{ type: string }} }}, required: [path] }}\n    variants:\n{variants}"
        ));
    }
    let project = mcp_resolve::load_str("many.yaml", &text);
    assert!(
        project
            .diagnostics
            .iter()
            .all(|d| d.severity != Severity::Error),
        "{:?}",
        project.diagnostics
    );
    let server = &project.servers[0];
    let mut budgets: Vec<u64> = vec![0, 1, 1000, (1 << 20) - 1];
    budgets.extend((0..30).map(|k| (1 << 20) + k * 3_000));
    budgets.extend([10_000_000, Limits::default().run_budget]);
    let mut mixed = 0;
    for run_budget in budgets {
        let limits = Limits {
            run_budget,
            ..Limits::default()
        };
        let mut analyzer = Analyzer::with_limits(limits);
        let in_order: Vec<Option<ToolAnalysis>> = server
            .tools
            .iter()
            .map(|t| analyzer.analyze_tool(t))
            .collect();
        let spent = in_order
            .iter()
            .filter(|a| matches!(a, Some(ToolAnalysis::Inconclusive(why)) if why.contains("budget of this run")))
            .count();
        if spent > 0 && spent < in_order.len() {
            mixed += 1;
        }
        for jobs in [1, 2, 3, 8] {
            let mut diags = Vec::new();
            let apart = analyze_server_with(server, limits, jobs, &mut diags);
            assert_eq!(apart, in_order, "run budget {run_budget}, {jobs} threads");
        }
    }
    // The sweep ran out of budget part way through the tools, not only at
    // the start or never.
    assert!(mixed >= 10, "only {mixed} budgets ran out part way");
}

/// An editor's cache of analyses changes nothing: a project analysed with
/// the analyses of another version of its text kept (tools edited, moved,
/// added, removed) gets, to the unit of the run's budget, the findings of
/// one analysed without.
#[test]
fn analyses_kept_between_versions_give_the_findings_of_a_fresh_run() {
    use mcp_resolve::{AnalysisCache, AnalysisLimits, LoadOptions, analyse, load_str_with};
    let tool = |i: usize, pattern: &str| {
        format!(
            "  - name: t{i}\n    inputSchema: {{ type: object, properties: {{ path: {{ type: string }}, mode: {{ enum: [r, w] }} }}, required: [path, mode] }}\n    variants:\n      - {{ name: tmp, when: {{ path: {{ pattern: \"{pattern}\" }} }} }}\n      - {{ name: read, when: {{ mode: r }} }}\n"
        )
    };
    let file = |tools: &[String]| {
        format!(
            "version: 1\nserver: {{ name: s, version: '1' }}\ntools:\n{}",
            tools.concat()
        )
    };
    let before: Vec<String> = (0..12).map(|i| tool(i, &format!("^/t{i}/"))).collect();
    // t0 removed, t5 edited (non-exhaustive → exhaustive), t11 moved first,
    // t12 added, every other tool moved by the edits before it.
    let mut after = before.clone();
    after[5] = after[5].replace("{ mode: r }", "{ mode: { enum: [r, w] } }");
    after.remove(0);
    let last = after.pop().unwrap_or_default();
    after.insert(0, last);
    after.push(tool(12, "^/t0/"));
    let (before, after) = (file(&before), file(&after));
    let mut mixed = 0;
    // The first DFA costs about a mebiunit; each tool's own pattern a few
    // thousand units more: budgets that run out part way through the tools.
    let budgets = (0..7).map(|k| (1 << 20) + k * 20_000);
    for run_budget in budgets.chain([0, AnalysisLimits::default().run_budget]) {
        let options = LoadOptions::default().with_analysis(AnalysisLimits {
            run_budget,
            ..AnalysisLimits::default()
        });
        let fresh = |text: &str| {
            let mut project = load_str_with("x.yaml", text, false, &options);
            analyse(&mut project, &options, None);
            project
        };
        let mut cache = AnalysisCache::new();
        // Tools kept: none at first; then the ten unchanged (t0 removed,
        // t5 changed, t12 new; the others moved); all twelve; the ten again.
        for (text, kept) in [(&before, 0), (&after, 10), (&after, 12), (&before, 10)] {
            let mut project = load_str_with("x.yaml", text, false, &options);
            analyse(&mut project, &options, Some(&mut cache));
            if run_budget == AnalysisLimits::default().run_budget {
                assert_eq!(cache.reused(), kept);
            }
            let expected = fresh(text);
            assert_eq!(
                project.diagnostics, expected.diagnostics,
                "run budget {run_budget}"
            );
            assert_eq!(project.servers, expected.servers, "run budget {run_budget}");
        }
        // Only the last version's tools are kept.
        assert!(cache.len() <= 12, "{} kept", cache.len());
        let spent = fresh(&after)
            .diagnostics
            .iter()
            .filter(|d| d.message.contains("inconclusive"))
            .count();
        if spent > 0 && spent < 12 {
            mixed += 1;
        }
    }
    // Some budgets ran out part way through the tools.
    assert!(mixed >= 3, "only {mixed} budgets ran out part way");
    // Analyses made within other limits are not taken.
    let mut cache = AnalysisCache::new();
    for budget in [1_000_000, 999_999] {
        let options = LoadOptions::default().with_analysis(AnalysisLimits {
            budget,
            ..AnalysisLimits::default()
        });
        let mut project = load_str_with("x.yaml", &after, false, &options);
        analyse(&mut project, &options, Some(&mut cache));
        assert_eq!(cache.reused(), 0);
    }
}

/// An analysis stopped part way (an editor's newer text arrived) leaves the
/// project as it was, and keeps what it finished: the next run takes those
/// tools from the cache and ends as a fresh run does.
#[test]
fn a_stopped_analysis_changes_nothing_and_keeps_what_it_finished() {
    use mcp_resolve::{AnalysisCache, LoadOptions, analyse, analyse_until, load_str_with};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let mut text = String::from("version: 1\nserver: { name: s, version: '1' }\ntools:\n");
    for i in 0..8 {
        text.push_str(&format!(
            "  - name: t{i}\n    inputSchema: {{ type: object, properties: {{ path: {{ type: string }} }} }}\n    variants:\n      - {{ name: tmp, when: {{ path: {{ pattern: \"^/t{i}/\" }} }} }}\n"
        ));
    }
    let options = LoadOptions::default();
    let checked = load_str_with("stopped.yaml", &text, false, &options);
    let mut cache = AnalysisCache::new();
    let mut project = load_str_with("stopped.yaml", &text, false, &options);
    let asked = AtomicUsize::new(0);
    let third = || asked.fetch_add(1, Ordering::SeqCst) >= 2;
    assert!(!analyse_until(
        &mut project,
        &options,
        Some(&mut cache),
        &third
    ));
    assert_eq!(project.diagnostics, checked.diagnostics);
    assert_eq!(project.servers, checked.servers);
    // The two tools analysed before the stop are kept; the rest is done now.
    assert!(analyse_until(
        &mut project,
        &options,
        Some(&mut cache),
        &|| false
    ));
    assert_eq!(cache.reused(), 2);
    let mut fresh = load_str_with("stopped.yaml", &text, false, &options);
    analyse(&mut fresh, &options, None);
    assert_eq!(project.diagnostics, fresh.diagnostics);
    assert_eq!(project.servers, fresh.servers);
}
