//! The YAML front end's fast path (`parse::yaml_fast`, the parser's events
//! straight to the tree) against serde-saphyr (`parse::yaml::parse_reference`)
//! on every YAML file in the repository and on documents at the edges of the
//! subset it decides: where it answers, the trees are equal, spans
//! included; where it gives up, the reference decides.

use mcp_resolve::internals::parse::{yaml, yaml_fast};

const MAX: usize = 8 * 1024 * 1024;

/// The fast path's tree, when it gives one, is the reference's; read in
/// pieces, when it can be, it is the same tree.
fn agree(name: &str, text: &str) -> bool {
    let fast = yaml_fast::parse(text, 4_000_000, 8_000_000);
    let reference = yaml::parse_reference(text, MAX);
    if let Some(fast) = &fast {
        assert_eq!(Ok(fast), reference.as_ref(), "{name}:\n{text}");
    }
    for threads in [2, 3, 8] {
        if let Some(cut) = yaml_fast::parse_cut(text, 4_000_000, 8_000_000, threads) {
            assert_eq!(
                Some(&cut),
                fast.as_ref(),
                "{name} in pieces, {threads} threads:\n{text}"
            );
        }
    }
    // The front end answers as the reference does, either way.
    assert_eq!(yaml::parse_within(text, MAX), reference, "{name}");
    fast.is_some()
}

#[test]
fn every_yaml_file_in_the_repository_reads_alike() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("node_modules") && !path.ends_with("target") {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for dir in ["rules", "tests/fixtures", "docs", "examples"] {
        walk(&crate::repo().join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() > 50, "{}", files.len());
    let mut decided = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        if text.trim().is_empty() {
            continue;
        }
        decided += usize::from(agree(&path.display().to_string(), &text));
    }
    // The fast path is the common case, not a curiosity.
    assert!(decided * 2 > files.len(), "{decided} of {}", files.len());
}

#[test]
fn documents_at_the_edges_of_the_subset() {
    // The reference recurses: a thread with the front end's stack.
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(edges)
        .unwrap()
        .join()
        .unwrap();
}

fn edges() {
    let cases = [
        // Decided.
        "a: 1\nb: -2\nc: 0\nd: true\ne: false\nf: null\ng: ~\nh:\ni: text with spaces\n",
        "version: 1\nserver: { name: s, version: 1.0.0 }\n",
        "k: 'quoted'\nq: \"dq \\u00e9 \\n\"\nl: |\n  block\n  text\nm: >\n  folded\n  text\n",
        "- a\n- [b, c]\n- {d: e}\n- []\n- {}\n",
        "é: ü\n\"x y\": 'z'\n",
        "a: /tmp/x\nb: _under\nc: 123456789012345678\n",
        // Given up: the reference decides (or refuses).
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: 1.5\nb: 1e3\nc: .inf\nd: 0x1F\ne: 0o17\nf: 007\ng: +1\nh: -0\n",
        "a: True\nb: NULL\nc: yes\nd: on\ne: Nan\nf: y\n",
        "a: 1234567890123456789012\n",
        "a: 1\na: 2\n",
        "1: a\n'1': b\n",
        "? [a, b]\n: c\n",
        "<<: {a: 1}\nb: 2\n",
        "a: ${x}\n",
        "--- a\n--- b\n",
        "%YAML 1.1\n---\na: yes\n",
        "# a comment\na: 1 # another\n",
        "a: [1, 2\n",
        "a:\n\t- b\n",
        "key: value\n  bad: indent\n",
        "a: 2025-06-18\nb: 12:30\n",
        // Keys that read alike, in a few keys and in many.
        "'null': a\nnull: b\n",
        "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10\na: 11\n",
        "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10\n",
        // Collections inside collections, each taking its own items.
        "a: [1, [2, 3], {b: [4]}, []]\nc: {d: [5, {e: 6}], f: {}}\ng: [[[h]]]\n",
    ];
    for (i, text) in cases.iter().enumerate() {
        agree(&format!("case {i}"), text);
    }
    assert!(agree("plain", cases[0]));
    assert!(agree("comments", "# a comment\na: 1 # another\n"));
    assert!(!agree("directive", "%YAML 1.1\n---\na: yes\n"));
    assert!(!agree("alias", cases[6]));
    assert!(!agree("duplicate", cases[11]));
    assert!(!agree("a string and a null key", cases[23]));
    assert!(!agree("duplicate among many", cases[24]));
    assert!(agree("many keys", cases[25]));
    assert!(agree("nested", cases[26]));
    // Nesting past the fast path's depth goes to the reference, which
    // refuses past its own budget.
    for depth in [yaml_fast::MAX_DEPTH - 1, yaml_fast::MAX_DEPTH + 1, 70, 200] {
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let decided = agree(&format!("depth {depth}"), &text);
        assert_eq!(decided, depth <= yaml_fast::MAX_DEPTH, "depth {depth}");
    }
}

/// Whether `text` is read in pieces (and, by [`agree`], to the same tree).
fn cuts(name: &str, text: &str) -> bool {
    agree(name, text);
    yaml_fast::parse_cut(text, 4_000_000, 8_000_000, 2).is_some()
}

#[test]
fn a_document_read_in_pieces_is_the_document() {
    let cut = [
        "tools:\n  - a\n  - b\n",
        "version: 1\ntools:\n  - name: a\n    x: [1, 2]\n  - name: b\nhints: {x: 1}\n",
        "tools: # the list\n  # before\n  - a\n# between, at the margin\n  # between\n\n  - b\n  # after\n",
        // Block scalars at an item's end keep or strip what follows them.
        "tools:\n  - d: |+\n      text\n\n  - d: |-\n      x\n\n\n  - e: >\n      folded\n      text\n\n  - f\n",
        // An item with a sequence in it; an empty item.
        "tools:\n  - - a\n    - b\n  -\n  - c\n",
        "tools:\n  - name: a\n    variants:\n      - when: {x: 1}\n      - when: {x: 2}\n  - name: b\n",
        // The document's end after the items.
        "tools:\n  - a\n  - b\n...\n",
    ];
    for (i, text) in cut.iter().enumerate() {
        assert!(cuts(&format!("cut {i}"), text), "cut {i}:\n{text}");
    }
    let whole = [
        // A cut inside a flow collection or a quoted scalar.
        "tools:\n  - {a: 1,\n  - b}\n  - c\n",
        "tools:\n  - \"abc\n  - def\"\n  - x\n",
        "tools:\n  - 'abc\n  - def'\n  - x\n",
        // `tools` twice; `tools` with a value on its line.
        "tools:\n  - a\n  - b\ntools: 1\n",
        "tools: [a,\n  b]\n",
        // No root mapping key at that line.
        "x: \"a\ntools:\n  - b\n  - c\"\n",
        "- tools:\n  - a\n  - b\n",
        // What the fast path leaves to the reference, in an item.
        "tools:\n  - &x a\n  - *x\n",
        "tools:\n  - a: 1.5\n  - b\n",
        // A second document; CRLF; a tab.
        "tools:\n  - a\n  - b\n---\nc: 1\n",
        "tools:\r\n  - a\r\n  - b\r\n",
        "tools:\n  - a\n  - b:\t1\n",
        // Items at the key's margin (the parser places that sequence
        // elsewhere than one read on its own).
        "tools:\n- a\n- b\nother: 1\n",
        // One item: nothing to share.
        "tools:\n  - a\nb: 1\n",
    ];
    for (i, text) in whole.iter().enumerate() {
        assert!(!cuts(&format!("whole {i}"), text), "whole {i}:\n{text}");
    }
    // The pieces' depth counts from where they sit: the tools' items are
    // two collections deep.
    for depth in [
        yaml_fast::MAX_DEPTH - 3,
        yaml_fast::MAX_DEPTH - 2,
        yaml_fast::MAX_DEPTH - 1,
    ] {
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let text = format!("tools:\n  - {deep}\n  - a\n");
        let decided = cuts(&format!("depth {depth}"), &text);
        assert_eq!(decided, depth + 2 <= yaml_fast::MAX_DEPTH, "depth {depth}");
    }
}

#[test]
fn a_large_rules_file_is_read_in_pieces_on_any_number_of_threads() {
    let mut text = String::from("version: 1\nserver: { name: s, version: 1.0.0 }\ntools:\n");
    for i in 0..2_000 {
        text.push_str(&format!(
            "  - name: tool_{i}\n    description: |\n      Tool {i}.\n    inputSchema:\n      type: object\n      properties: {{ action: {{ type: string, enum: [a, b] }} }}\n    variants:\n      - name: read\n        when: {{ action: a }}\n        annotations: {{ readOnlyHint: true }}\n"
        ));
    }
    text.push_str("hints:\n  - name: x\n");
    let whole = yaml_fast::parse(&text, 4_000_000, 8_000_000).unwrap();
    for threads in [2, 3, 4, 7, 16] {
        let cut = yaml_fast::parse_cut(&text, 4_000_000, 8_000_000, threads);
        assert_eq!(cut.as_ref(), Some(&whole), "{threads} threads");
        assert_eq!(
            yaml_fast::parse_on(&text, 4_000_000, 8_000_000, threads).as_ref(),
            Some(&whole)
        );
    }
    // The budgets: the whole reading decides near them.
    let nodes = 2_000 * 24;
    for max in [nodes / 2, nodes + 10] {
        assert!(
            yaml_fast::parse_cut(&text, max, 8_000_000, 2).is_none(),
            "{max}"
        );
        assert_eq!(
            yaml_fast::parse_on(&text, max, 8_000_000, 2),
            yaml_fast::parse(&text, max, 8_000_000)
        );
    }
}

#[test]
fn budgets_are_kept_by_giving_up() {
    let text = "- 1\n".repeat(100);
    assert!(yaml_fast::parse(&text, 100, 1_000).is_none());
    assert!(yaml_fast::parse(&text, 101, 1_000).is_some());
    assert!(yaml_fast::parse(&text, 1_000, 50).is_none());
}
