//! The report's prose fitted to the terminal it is read on: a line longer
//! than the terminal is wrapped between words, its continuation indented
//! under its text (after `* ` or a label's indent), a `backquoted command`
//! never split so it still copies whole (the report and a roll's, `status`,
//! the confirmation's warnings, and the warnings and lines printed above
//! the bars). A table (from an upper-case
//! header, `NODE   STATUS ...`, to the next blank line) is never wrapped;
//! one wider than the terminal gets its first column on a line of its own.
//! Nothing written elsewhere than a terminal is touched: scripts and
//! `-o json` read whole lines.

use dialoguer::console::{Term, measure_text_width};

/// `text` for stdout: fitted when stdout is a terminal.
pub(crate) fn for_stdout(text: String) -> String {
    fit_on(&Term::stdout(), text)
}

/// `text` for stderr: fitted when stderr is a terminal.
pub(crate) fn for_stderr(text: String) -> String {
    fit_on(&Term::stderr(), text)
}

fn fit_on(term: &Term, text: String) -> String {
    match term.size_checked() {
        Some((_, cols)) if term.is_term() => to_width(&text, usize::from(cols)),
        _ => text,
    }
}

/// `text` with every prose line wrapped at `width` columns, and every table
/// wider than that given its first column on a line of its own.
pub(crate) fn to_width(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut table: Vec<&str> = Vec::new();
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        if !table.is_empty() {
            if !body.trim().is_empty() && second_column(table[0]).is_none_or(|at| aligned(body, at))
            {
                table.push(body);
                continue;
            }
            narrow_table(&std::mem::take(&mut table), width, &mut out);
        }
        if is_header(body) {
            table.push(body);
            continue;
        }
        if measure_text_width(body) <= width {
            out.push_str(line);
            continue;
        }
        wrap(body, width, &mut out);
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    if !table.is_empty() {
        narrow_table(&table, width, &mut out);
    }
    out
}

/// A table as it is when it fits; otherwise each row cut in two at the
/// first column boundary where both halves fit, the second half indented
/// under the first: a cloud node name leaves too little room for the
/// columns after it at 80 columns.
fn narrow_table(rows: &[&str], width: usize, out: &mut String) {
    let fits = rows.iter().all(|r| measure_text_width(r) <= width);
    let cuts = if fits { Vec::new() } else { cuts(rows, width) };
    for row in rows {
        let mut from = 0;
        for (i, to) in cuts.iter().copied().map(Some).chain([None]).enumerate() {
            let piece = slice(row, from, to);
            from = to.unwrap_or(from);
            if i > 0 {
                if piece.trim().is_empty() {
                    continue;
                }
                out.push_str("  ");
            }
            out.push_str(if to.is_some() {
                piece.trim_end()
            } else {
                piece
            });
            out.push('\n');
        }
    }
}

/// Where a too-wide table's rows are cut: the first boundary where both
/// halves fit (the first column on a line of its own, most often); when
/// none does (a narrow terminal), after the first column and then at the
/// farthest boundary each further piece fits at, indented by 2.
fn cuts(rows: &[&str], width: usize) -> Vec<usize> {
    let starts = column_starts(rows[0]);
    let all_aligned = |at: usize| rows.iter().all(|r| aligned(r, at));
    let piece_fits = |from: usize, to: Option<usize>, indent: usize| {
        rows.iter()
            .all(|r| indent + measure_text_width(slice(r, from, to).trim_end()) <= width)
    };
    if let Some(at) = starts
        .iter()
        .copied()
        .find(|&at| all_aligned(at) && piece_fits(0, Some(at), 0) && piece_fits(at, None, 2))
    {
        return vec![at];
    }
    let Some(first) = starts.iter().copied().find(|&at| all_aligned(at)) else {
        return Vec::new();
    };
    let mut cuts = vec![first];
    let mut from = first;
    while !piece_fits(from, None, 2) {
        let later: Vec<usize> = starts
            .iter()
            .copied()
            .filter(|&at| at > from && all_aligned(at))
            .collect();
        let Some(&nearest) = later.first() else { break };
        let next = later
            .iter()
            .rev()
            .copied()
            .find(|&at| piece_fits(from, Some(at), 2))
            .unwrap_or(nearest);
        cuts.push(next);
        from = next;
    }
    cuts
}

/// A row's bytes from `from` to `to` (its end when none, or when shorter).
fn slice(row: &str, from: usize, to: Option<usize>) -> &str {
    let end = to.map_or(row.len(), |t| t.min(row.len()));
    row.get(from.min(end)..end).unwrap_or_default()
}

/// Where a header's columns after the first start: after a gap of two
/// spaces or more (`STILL HOLDING` is one column).
fn column_starts(header: &str) -> Vec<usize> {
    header
        .char_indices()
        .filter(|&(i, c)| c != ' ' && header[..i].ends_with("  "))
        .map(|(i, _)| i)
        .collect()
}

/// Where a header's second column starts.
fn second_column(header: &str) -> Option<usize> {
    column_starts(header).first().copied()
}

/// Whether a row has the gap before the second column where its header
/// does: a table's rows do, the prose after it does not. A row that ends
/// before the second column is the table's only when it is one cell (no
/// space in it): `node/n1: --timeout passed` after the table is prose.
fn aligned(row: &str, at: usize) -> bool {
    if row.len() <= at {
        return !row.trim().contains(' ');
    }
    row.is_char_boundary(at) && row[..at].ends_with("  ")
}

/// A table's header: two or more upper-case words, nothing in lower case.
fn is_header(line: &str) -> bool {
    line.split_whitespace().count() >= 2
        && line.chars().any(|c| c.is_ascii_uppercase())
        && !line.chars().any(char::is_lowercase)
}

fn wrap(line: &str, width: usize, out: &mut String) {
    let lead = line.len() - line.trim_start().len();
    let rest = &line[lead..];
    let hang = lead
        + if rest.starts_with("* ") {
            2
        } else {
            2.min(width / 4)
        };
    let mut col = 0;
    let mut fresh = false;
    for (i, word) in words(rest).into_iter().enumerate() {
        let w = measure_text_width(word);
        if i > 0 && w + hang > width && is_command(word) {
            // A command too long for a line: on lines of its own, as a
            // shell continues it, so that it still copies whole.
            command_lines(word.trim_matches('`'), hang + 2, width, out);
            out.push('\n');
            out.push_str(&" ".repeat(hang));
            (col, fresh) = (hang, true);
            continue;
        }
        if std::mem::take(&mut fresh) {
            out.push_str(word);
            col += w;
            continue;
        }
        if i == 0 {
            out.push_str(&line[..lead]);
            out.push_str(word);
            col = lead + w;
        } else if col + 1 + w > width && col > hang {
            out.push('\n');
            out.push_str(&" ".repeat(hang));
            out.push_str(word);
            col = hang + w;
        } else {
            out.push(' ');
            out.push_str(word);
            col += 1 + w;
        }
    }
}

/// `text` as rows of a live frame `width` columns wide: wrapped between
/// words, the first row `first` columns (what stands before it on its row
/// taken off), the others indented by `indent`; a word wider than a row is
/// split, since a frame's row must never be wider than the terminal.
pub(crate) fn frame_rows(text: &str, first: usize, width: usize, indent: usize) -> String {
    let mut rows = Rows {
        out: String::with_capacity(text.len()),
        col: 0,
        room: first.max(1),
        rest: width.saturating_sub(indent).max(1),
        indent,
    };
    // A row breaks between the parts of a ` · ` list first, then between words.
    let sep = super::glyphs::glyphs().sep;
    let sep = format!(" {sep} ");
    let parts: Vec<&str> = text.split(sep.as_str()).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let part = if last {
            (*part).to_string()
        } else {
            format!("{part}{}", sep.trim_end())
        };
        if rows.col > 0 && rows.col + 1 + measure_text_width(&part) > rows.room {
            rows.next();
        }
        for word in part.split(' ').filter(|w| !w.is_empty()) {
            rows.word(word);
        }
    }
    rows.out
}

/// Rows being filled for [`frame_rows`].
struct Rows {
    out: String,
    col: usize,
    room: usize,
    rest: usize,
    indent: usize,
}

impl Rows {
    fn next(&mut self) {
        self.out.push('\n');
        self.out.push_str(&" ".repeat(self.indent));
        (self.col, self.room) = (0, self.rest);
    }

    fn word(&mut self, word: &str) {
        let w = measure_text_width(word);
        if self.col > 0 && self.col + 1 + w <= self.room {
            self.out.push(' ');
            self.col += 1;
        } else if self.col > 0 {
            self.next();
        }
        if w <= self.room - self.col {
            self.out.push_str(word);
            self.col += w;
            return;
        }
        for c in word.chars() {
            let cw = measure_text_width(c.encode_utf8(&mut [0; 4]));
            if self.col + cw > self.room {
                self.next();
            }
            self.out.push(c);
            self.col += cw;
        }
    }
}

/// A `backquoted span` of words: a command to copy.
fn is_command(word: &str) -> bool {
    word.len() > 2 && word.starts_with('`') && word.ends_with('`') && word.contains(' ')
}

/// `command` from a new line `indent` columns in, its words packed into
/// lines of `width` ended by ` \`, the continuations 2 columns further in.
fn command_lines(command: &str, indent: usize, width: usize, out: &mut String) {
    out.push('\n');
    out.push_str(&" ".repeat(indent));
    let mut col = indent;
    for (i, word) in command.split(' ').filter(|w| !w.is_empty()).enumerate() {
        let w = measure_text_width(word);
        if i > 0 && col + 1 + w + 2 > width {
            // Less indent for a word that would not fit with it.
            let pad = (indent + 2).min(width.saturating_sub(w + 2));
            out.push_str(" \\\n");
            out.push_str(&" ".repeat(pad));
            col = pad;
        } else if i > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += w;
    }
}

/// The words of a line, a `backquoted span` counting as one.
fn words(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (None, false);
    for (i, c) in s.char_indices() {
        match c {
            '`' => {
                quoted = !quoted;
                start.get_or_insert(i);
            }
            ' ' if !quoted => {
                if let Some(st) = start.take() {
                    out.push(&s[st..i]);
                }
            }
            _ => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{frame_rows, to_width};

    #[test]
    fn a_command_too_long_for_a_line_is_continued_as_a_shell_continues_it() {
        let a = "gke-prod-pool-1-3f2a9c1d-abcd.europe-west1-b.c.internal";
        let b = "gke-prod-pool-1-3f2a9c1d-efgh.europe-west1-c.c.internal";
        let line = format!(
            "1 of 2 drained; left cordoned: {a}, {b}. `kubectl maintain uncordon {a} {b}` returns them to service."
        );
        let fitted = to_width(&line, 80);
        let lines: Vec<&str> = fitted.lines().collect();
        let start = lines
            .iter()
            .position(|l| l.trim() == "kubectl maintain uncordon \\")
            .unwrap_or_else(|| panic!("the command on a line of its own:\n{fitted}"));
        assert_eq!(lines[start + 1].trim(), format!("{a} \\"), "{fitted}");
        assert_eq!(lines[start + 2].trim(), b, "{fitted}");
        assert_eq!(
            lines[start + 3].trim(),
            "returns them to service.",
            "{fitted}"
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{fitted}");
        // Short enough: it stays one backquoted span.
        let short = to_width(
            "`kubectl maintain uncordon n1 n2` returns them to service.",
            80,
        );
        assert!(
            short.contains("`kubectl maintain uncordon n1 n2`"),
            "{short}"
        );
    }

    /// The prose right after a table is wrapped as prose, even a line
    /// shorter than the table's first column (a short node's message).
    #[test]
    fn a_short_line_after_a_table_is_prose() {
        let text = "\
NODE                                                      STATUS      WAVES   TIME
n0-gymfo                                                  timed out   user    4.0s
n1-kbk5hp3hvo0s97s-iambg1i.4ti8bdu6lw2agri0up8vfs.ygncz   timed out   user    4.0s
node/n0-gymfo: --timeout passed for this node
";
        let fitted = to_width(text, 43);
        assert!(
            fitted
                .lines()
                .all(|l| l.chars().count() <= 43 || !l.trim().contains(' ')),
            "{fitted}"
        );
        assert!(
            fitted.contains("node/n0-gymfo: --timeout passed for this\n"),
            "{fitted}"
        );
    }

    #[test]
    fn a_table_too_wide_for_two_lines_a_row_is_cut_into_more() {
        let table = "\
NODE                                       STATUS      WAVES   EVICTED   GONE   SKIPPED   REMAINING   TIME
ip-10-0-12-34.eu-west-1.compute.internal   timed out   user    0         0      0         1           8.0s
";
        let fitted = to_width(table, 40);
        let lines: Vec<&str> = fitted.lines().collect();
        assert!(lines.len() > 4, "more than two lines a row:\n{fitted}");
        for line in &lines {
            assert!(line.chars().count() <= 40, "{line:?} in\n{fitted}");
        }
        assert_eq!(lines[0], "NODE", "{fitted}");
        assert!(lines[1].starts_with("  STATUS"), "{fitted}");
        assert_eq!(
            fitted.split_whitespace().collect::<Vec<_>>(),
            table.split_whitespace().collect::<Vec<_>>(),
            "nothing lost"
        );
    }

    #[test]
    fn a_frame_row_never_passes_the_width() {
        let text =
            "nodes: 1 in progress, 1 refused, 1 waiting · 3 cordoned · pods gone 0/7 (2 evicted)";
        for width in [12_usize, 20, 40, 60, 80, 120] {
            let rows = frame_rows(text, width.saturating_sub(11), width, 4);
            for (i, row) in rows.lines().enumerate() {
                let room = if i == 0 { width - 11 } else { width };
                assert!(
                    super::measure_text_width(row) <= room,
                    "{width}: {row:?} in {rows:?}"
                );
            }
            assert_eq!(
                rows.split_whitespace().collect::<String>(),
                text.split_whitespace().collect::<String>(),
                "nothing lost at {width}"
            );
        }
        assert_eq!(frame_rows("a b", 10, 10, 2), "a b");
    }

    #[test]
    fn prose_wraps_under_its_text_and_tables_and_commands_stay_whole() {
        let report = "\
NODE                                          STATUS      WAVES   EVICTED   GONE
ip-10-0-12-34.eu-west-1.compute.internal      timed out   user    1         0
node/ip-10-0-12-34.eu-west-1.compute.internal: --timeout passed for this node

What blocks the drain:
* blocked by PodDisruptionBudget shop/db (1 pod): shop/db-0 on ip-10-0-12-34.eu-west-1.compute.internal
  what to do: rerun with --surge, or --deadline D (deleted past it, the budget bypassed), or relax the PDB

0 of 1 drained; left cordoned: ip-10-0-12-34.eu-west-1.compute.internal. `kubectl maintain uncordon ip-10-0-12-34.eu-west-1.compute.internal` returns it to service.
";
        let fitted = to_width(report, 60);
        let lines: Vec<&str> = fitted.lines().collect();
        assert_eq!(lines[0], "NODE", "the node on a line of its own: {fitted}");
        assert_eq!(lines[1], "  STATUS      WAVES   EVICTED   GONE");
        assert_eq!(lines[2], "ip-10-0-12-34.eu-west-1.compute.internal");
        assert_eq!(lines[3], "  timed out   user    1         0");
        assert_eq!(
            lines[4],
            "node/ip-10-0-12-34.eu-west-1.compute.internal: --timeout"
        );
        assert_eq!(
            lines[5], "  passed for this node",
            "prose after a table is prose"
        );
        assert_eq!(
            lines[8],
            "* blocked by PodDisruptionBudget shop/db (1 pod): shop/db-0"
        );
        assert_eq!(lines[9], "  on ip-10-0-12-34.eu-west-1.compute.internal");
        assert!(lines[10].starts_with("  what to do: rerun with --surge, or --deadline D"));
        assert!(lines[11].starts_with("    "), "{fitted}");
        // The command, too long for 60 columns, continued as a shell does.
        let at = lines
            .iter()
            .position(|l| *l == "    kubectl maintain uncordon \\")
            .unwrap_or_else(|| panic!("the command on lines of its own: {fitted}"));
        assert_eq!(
            lines[at + 1],
            "      ip-10-0-12-34.eu-west-1.compute.internal",
            "{fitted}"
        );
        assert!(
            fitted
                .lines()
                .filter(|l| !l.contains('`'))
                .all(|l| l.len() <= 60),
            "{fitted}"
        );
        assert_eq!(to_width(report, 400), report, "nothing to fit");
        let held = "Budgets that held:\nPDB       NODE   HELD\nshop/db   n1     4.0s\n\nafter\n";
        assert_eq!(to_width(held, 30), held, "a table after a title is a table");
        let held = "\
PDB         NODE                                       HELD   STILL HOLDING   PODS
apps/solo   ip-10-0-12-34.eu-west-1.compute.internal   6.0s   yes             apps/solo-j5cgfkj85g-2w8ht
";
        assert_eq!(
            to_width(held, 80),
            "\
PDB         NODE
  HELD   STILL HOLDING   PODS
apps/solo   ip-10-0-12-34.eu-west-1.compute.internal
  6.0s   yes             apps/solo-j5cgfkj85g-2w8ht
",
            "cut where both halves fit"
        );
    }
}
