//! Where a YAML error is, for `FILE:LINE:COLUMN: message` errors.

/// The line, column and message of a serde-saphyr error, the message
/// without the position its text repeats.
pub fn position(err: &serde_saphyr::Error) -> (u64, u64, String) {
    let (line, column) = err.location().map_or((0, 0), |l| (l.line(), l.column()));
    let text = err.to_string();
    // The error's own text repeats the position ("error: line 8 column 33:
    // ..." or "... at line 8 column 33"); keep the message once.
    let first = text.lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let first = match first.strip_prefix("line ") {
        Some(rest) => rest.split_once(": ").map_or(first, |(_, m)| m),
        None => first,
    };
    let message = first.split_once(" at line ").map_or(first, |(m, _)| m);
    (line, column, for_operators(message))
}

/// The parser's words with its advice to programmers taken out (`set
/// DuplicateKeyPolicy in Options`, `use Option<String>`): the person who
/// reads them wrote the YAML, not the code.
fn for_operators(message: &str) -> String {
    let message = message
        .split_once(", set DuplicateKeyPolicy")
        .map_or(message, |(m, _)| m);
    let message = message.split_once("; use ").map_or(message, |(m, _)| m);
    match message.strip_prefix("cannot deserialize null into ") {
        Some(what) => format!("expected {}, found null", what.trim()),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn advice_to_programmers_never_reaches_an_operator() {
        for text in ["a: 1\na: 2\n", "a: ~\n"] {
            let err = serde_saphyr::from_str::<std::collections::BTreeMap<String, String>>(text)
                .unwrap_err();
            let (line, _, message) = super::position(&err);
            assert!(line > 0, "{message}");
            for hint in ["DuplicateKeyPolicy", "Option<", "Options"] {
                assert!(!message.contains(hint), "{message}");
            }
        }
    }
}
