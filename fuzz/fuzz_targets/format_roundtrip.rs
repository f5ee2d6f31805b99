//! `fmt` and `convert` on any input, with oracles: formatting never ends in
//! an internal error (its own check that the output compiles to the same
//! rules, which guards `fmt --write`); the output formats to itself
//! (idempotence); and the output has the same diagnostics (by code) as the
//! input. The first byte picks the input's syntax.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mcp_resolve::format::{FormatError, Syntax, format_file};

fn codes(path: &str, text: &str) -> Vec<String> {
    let mut codes: Vec<String> = mcp_resolve::load_str(path, text)
        .diagnostics
        .iter()
        .map(|d| d.code.to_string())
        .collect();
    codes.sort();
    codes
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let input = if selector % 2 == 0 {
        "fuzz.yaml"
    } else {
        "fuzz.rules"
    };
    let before = codes(input, text);
    for (to, output) in [(Syntax::Yaml, "out.yaml"), (Syntax::Rules, "out.rules")] {
        match format_file(Path::new(input), text, to) {
            Ok(out) => {
                let again = format_file(Path::new(output), &out, to);
                match again {
                    Ok(again) => assert_eq!(again, out, "not idempotent:\n{text}\n---\n{out}"),
                    Err(e) => {
                        panic!("the output does not format again ({e:?}):\n{text}\n---\n{out}")
                    }
                }
                assert_eq!(
                    codes(output, &out),
                    before,
                    "diagnostics changed:\n{text}\n---\n{out}"
                );
            }
            Err(FormatError::Invalid(_)) => {}
            Err(FormatError::Internal(why)) => panic!("internal error: {why}\n{text}"),
        }
    }
});
