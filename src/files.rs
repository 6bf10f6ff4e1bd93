//! The small files an operator names (a plan, workload times, a
//! `file:PATH` endpoint): read up to a bound, whatever they are, so that
//! `/dev/zero`, a FIFO or a growing log cannot grow the process without
//! bound (the size a file's metadata gives says nothing of those), and
//! text that is not UTF-8 is named at its line and column.

use std::io::Read as _;
use std::path::Path;

/// Anything over a megabyte is a mistake, or an attack on a parser.
pub(crate) const MAX_BYTES: u64 = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub(crate) enum SmallFileError {
    #[error("{0}")]
    Io(std::io::Error),
    #[error("files larger than {MAX_BYTES} bytes are refused")]
    TooLarge,
    #[error("line {line}, column {column} is not UTF-8 text")]
    NotUtf8 { line: usize, column: usize },
}

/// The file's text, read up to [`MAX_BYTES`].
pub(crate) fn read_text(path: &Path) -> Result<String, SmallFileError> {
    let file = std::fs::File::open(path).map_err(SmallFileError::Io)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(SmallFileError::Io)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(SmallFileError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        SmallFileError::NotUtf8 {
            line: good.split(|b| *b == b'\n').count(),
            column: String::from_utf8_lossy(&good[line_start..]).chars().count() + 1,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_after_the_bound() {
        assert!(matches!(
            read_text(Path::new("/dev/zero")),
            Err(SmallFileError::TooLarge)
        ));
    }

    #[test]
    fn text_that_is_not_utf8_is_named_where_it_breaks() {
        let dir = std::env::temp_dir().join(format!("small-file-{}", std::process::id()));
        std::fs::write(&dir, b"a: 1\nb: \xc3\xa9\xff\n").unwrap();
        let e = read_text(&dir).unwrap_err();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(e.to_string(), "line 2, column 5 is not UTF-8 text");
    }
}
