//! The few characters the screen draws beyond ASCII (the separator `·`,
//! the `↳` under a bar, the spinner's braille), and their ASCII stand-ins
//! where the locale is not UTF-8 (`LANG=C`, a minimal container, a serial
//! console): the locale is the first set of `LC_ALL`, `LC_CTYPE` and
//! `LANG`, as the C library reads it, and none set is the C locale.

use std::sync::OnceLock;

/// The characters one terminal gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Glyphs {
    /// Between the parts of a status line.
    pub(crate) sep: &'static str,
    /// Before the line under a bar.
    pub(crate) under: &'static str,
    /// The spinner's frames, the last one shown when it ends.
    pub(crate) spinner: &'static str,
}

const UTF8: Glyphs = Glyphs {
    sep: "·",
    under: "↳",
    spinner: "⠁⠂⠄⡀⢀⠠⠐⠈ ",
};

const ASCII: Glyphs = Glyphs {
    sep: "-",
    under: "->",
    spinner: "|/-\\ ",
};

/// This process's glyphs, from its locale.
pub(crate) fn glyphs() -> Glyphs {
    static CHOSEN: OnceLock<Glyphs> = OnceLock::new();
    *CHOSEN.get_or_init(|| of_locale(|name| std::env::var(name).ok()))
}

fn of_locale(var: impl Fn(&str) -> Option<String>) -> Glyphs {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .into_iter()
        .find_map(|name| var(name).filter(|v| !v.is_empty()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    if locale.contains("utf-8") || locale.contains("utf8") {
        UTF8
    } else {
        ASCII
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Glyphs {
        of_locale(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_string())
        })
    }

    #[test]
    fn the_first_locale_variable_set_decides() {
        assert_eq!(with(&[("LANG", "en_US.UTF-8")]), UTF8);
        assert_eq!(with(&[("LANG", "C.utf8")]), UTF8);
        assert_eq!(with(&[("LANG", "C")]), ASCII);
        assert_eq!(with(&[]), ASCII);
        assert_eq!(with(&[("LC_ALL", "C"), ("LANG", "en_US.UTF-8")]), ASCII);
        assert_eq!(with(&[("LC_ALL", ""), ("LC_CTYPE", "de_DE.UTF-8")]), UTF8);
        assert!(ASCII.sep.is_ascii() && ASCII.under.is_ascii() && ASCII.spinner.is_ascii());
    }
}
