//! The plan and selector parsers never panic, whatever they are fed: the
//! committed corpus (tests/corpus), mutations of it, and arbitrary input.
//! A failure proptest finds is reduced and belongs in the corpus.

use std::path::Path;

use kube_conventions::selector::Selector;
use kubectl_maintain::policy::plan::file;
use proptest::prelude::*;

fn corpus(kind: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(kind);
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    out.sort();
    out
}

/// A mutation of a seed: cut, insert or replace at a position.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Insert(usize, String),
    Replace(usize, char),
    Duplicate(usize, usize),
}

fn apply(seed: &str, m: &Mutation) -> String {
    let chars: Vec<char> = seed.chars().collect();
    let at = |i: usize| {
        if chars.is_empty() {
            0
        } else {
            i % (chars.len() + 1)
        }
    };
    match m {
        Mutation::Truncate(i) => chars[..at(*i)].iter().collect(),
        Mutation::Insert(i, s) => {
            let i = at(*i);
            chars[..i].iter().collect::<String>() + s + &chars[i..].iter().collect::<String>()
        }
        Mutation::Replace(i, c) => {
            let mut c2 = chars.clone();
            if !c2.is_empty() {
                let i = i % c2.len();
                c2[i] = *c;
            }
            c2.into_iter().collect()
        }
        Mutation::Duplicate(start, len) => {
            let (from, to) = (at(*start), at(*start + *len));
            let (from, to) = (from.min(to), from.max(to));
            let piece: String = chars[from..to].iter().collect();
            chars[..to].iter().collect::<String>()
                + &piece
                + &chars[to..].iter().collect::<String>()
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let yamlish = prop::sample::select(vec![
        ":",
        "- ",
        "{",
        "}",
        "[",
        "]",
        "\n",
        "  ",
        "&a ",
        "*a",
        "!!str ",
        "'",
        "\"",
        "#",
        "---\n",
        "%",
        "\t",
        "\u{feff}",
        "\u{0}",
        "podPriority: 99999999999\n",
        "operator: Gt\n",
        "effect: Bad\n",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), yamlish).prop_map(|(i, s)| Mutation::Insert(i, s)),
        (any::<usize>(), any::<char>()).prop_map(|(i, c)| Mutation::Replace(i, c)),
        (any::<usize>(), 0usize..200).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

#[test]
fn the_corpus_parses_as_expected() {
    for seed in corpus("plans") {
        file::parse("seed.yaml", &seed).unwrap_or_else(|e| panic!("{e}\n{seed}"));
    }
    for seed in corpus("selectors") {
        Selector::parse(seed.trim()).unwrap_or_else(|e| panic!("{e}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn plan_parser_never_panics_on_mutated_plans(seed in 0usize..3, muts in prop::collection::vec(mutation(), 1..4)) {
        let seeds = corpus("plans");
        let mut text = seeds[seed % seeds.len()].clone();
        for m in &muts {
            text = apply(&text, m);
        }
        if let Err(e) = file::parse("fuzz.yaml", &text) {
            // Every error names where it is and says something.
            prop_assert!(e.to_string().starts_with("fuzz.yaml:"));
            prop_assert!(!e.message.is_empty());
        }
    }

    #[test]
    fn plan_parser_never_panics_on_anything(text in ".{0,400}") {
        let _ = file::parse("fuzz.yaml", &text);
    }

    #[test]
    fn selector_parser_never_panics(text in "[a-z0-9=!<>(), ./_-]{0,80}|.{0,60}") {
        if let Ok(sel) = Selector::parse(&text) {
            // What parses prints back to the same selector.
            let again = Selector::parse(&sel.to_string()).expect("a printed selector parses");
            prop_assert_eq!(again, sel);
        }
    }
}
