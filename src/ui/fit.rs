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
    let cut = (!fits).then(|| {
        column_starts(rows[0]).into_iter().find(|&at| {
            rows.iter().all(|r| {
                let (head, tail) = r.split_at(at.min(r.len()));
                aligned(r, at)
                    && measure_text_width(head.trim_end()) <= width
                    && 2 + measure_text_width(tail) <= width
            })
        })
    });
    for row in rows {
        if let Some(at) = cut.flatten() {
            let (head, tail) = row.split_at(at.min(row.len()));
            out.push_str(head.trim_end());
            out.push('\n');
            if !tail.trim().is_empty() {
                out.push_str("  ");
                out.push_str(tail);
                out.push('\n');
            }
        } else {
            out.push_str(row);
            out.push('\n');
        }
    }
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
/// does: a table's rows do, the prose after it does not.
fn aligned(row: &str, at: usize) -> bool {
    row.len() <= at || (row.is_char_boundary(at) && row[..at].ends_with("  "))
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
    for (i, word) in words(rest).into_iter().enumerate() {
        let w = measure_text_width(word);
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
    use super::to_width;

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
        assert!(
            lines.contains(
                &"  `kubectl maintain uncordon ip-10-0-12-34.eu-west-1.compute.internal`"
            ),
            "the command is whole on its own line: {fitted}"
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
