//! Writing to stdout and stderr without ever stopping the work: a full
//! disk (`>/dev/full`) or a closed pipe (`| head`) is remembered, the run
//! goes on (an `uncordon n5 n6` still returns n6), and the process ends
//! with exit 1 and one line in kubectl's words (`error: write /dev/stdout:
//! no space left on device`), never a panic. `println!` would panic on the
//! first failed write; everything this program prints goes through
//! [`outln!`](crate::outln) and [`errln!`](crate::errln) instead.

use std::io::Write as _;
use std::sync::OnceLock;

/// The first write that failed, in Go's words for it.
static FAILED: OnceLock<String> = OnceLock::new();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Out,
    Err,
}

/// Writes to a stream and flushes it at once (so that a failure is seen
/// here, not lost at exit), remembering the first failure.
pub(crate) fn write(stream: Stream, args: std::fmt::Arguments<'_>) {
    let result = match stream {
        Stream::Out => {
            let mut out = std::io::stdout().lock();
            out.write_fmt(args).and_then(|()| out.flush())
        }
        Stream::Err => std::io::stderr().lock().write_fmt(args),
    };
    if let Err(e) = result {
        failed(stream, &e);
    }
}

/// Remembers a failed write (the first one counts).
pub(crate) fn failed(stream: Stream, e: &std::io::Error) {
    let name = match stream {
        Stream::Out => "/dev/stdout",
        Stream::Err => "/dev/stderr",
    };
    let _ = FAILED.set(format!("write {name}: {}", go_words(e)));
}

/// The first failed write, if any: the process then exits 1.
pub(crate) fn failure() -> Option<&'static str> {
    FAILED.get().map(String::as_str)
}

/// An I/O error as Go's syscall package says it.
fn go_words(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(28) => "no space left on device".into(),
        Some(32) => "broken pipe".into(),
        Some(5) => "input/output error".into(),
        _ => {
            let words = e.to_string();
            // Rust adds " (os error N)".
            match words.split_once(" (os error") {
                Some((w, _)) => w.to_lowercase(),
                None => words,
            }
        }
    }
}

/// `println!` that never panics (crate::ui::streams).
#[macro_export]
macro_rules! outln {
    () => { $crate::ui::streams::write($crate::ui::streams::Stream::Out, format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::ui::streams::write($crate::ui::streams::Stream::Out, format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that never panics (crate::ui::streams).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::ui::streams::write($crate::ui::streams::Stream::Out, format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics (crate::ui::streams).
#[macro_export]
macro_rules! errln {
    () => { $crate::ui::streams::write($crate::ui::streams::Stream::Err, format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::ui::streams::write($crate::ui::streams::Stream::Err, format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics (crate::ui::streams).
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::ui::streams::write($crate::ui::streams::Stream::Err, format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_read_as_go_says_them() {
        let e = std::io::Error::from_raw_os_error(28);
        assert_eq!(super::go_words(&e), "no space left on device");
        let e = std::io::Error::from_raw_os_error(32);
        assert_eq!(super::go_words(&e), "broken pipe");
    }
}
