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
    let message = first
        .split_once(" at line ")
        .map_or(first, |(m, _)| m)
        .to_string();
    (line, column, message)
}
