//! The last test target of this package (cargo runs targets by name): says,
//! outside libtest's captured output, which suites with real components
//! this run skipped because their component was not installed, and how to
//! run them. README's test command, `scripts/test.sh`, installs every one;
//! under CI a missing one is a failure here as well as in its suite.

mod common;

fn main() {
    let missing: Vec<&(&str, &str)> = common::COMPONENTS
        .iter()
        .filter(|(var, _)| std::env::var_os(var).is_none_or(|v| v.is_empty()))
        .collect();
    if missing.is_empty() {
        println!("every suite with real components ran");
        return;
    }
    let list: Vec<String> = missing
        .iter()
        .map(|(var, what)| format!("  - {what} ({var})"))
        .collect();
    let message = format!(
        "note: {} suites with real components were skipped, their components not installed:\n{}\n      `scripts/test.sh` installs them under target/ and runs every suite",
        missing.len(),
        list.join("\n")
    );
    if std::env::var_os("CI").is_some() {
        eprintln!("{message}");
        std::process::exit(1);
    }
    println!("\n{message}\n");
}
