//! The bars' frame as the terminal should hold it: one line per row,
//! each ended by a line break, so that the terminal never holds the frame
//! as one long wrapped line, and a resize leaves nothing of an old frame.
//!
//! indicatif draws a frame as its rows, each padded with spaces to the
//! terminal's width and none followed by a line break (indicatif
//! `draw_target.rs`, `draw_to_term`): the rows hold together only by the
//! terminal's automatic wrap. A terminal that reflows its text on a resize
//! (tmux, VTE, iTerm2, kitty, Windows Terminal) then rewraps the frame at
//! the new width, indicatif's count of the rows to go back over no longer
//! matches, and the old frame stays on screen above the new one. Here the
//! padding becomes an erase to the end of the line and a line break before
//! the next row; the last row ends the frame with an erase of everything
//! below; and the first move up of a frame drawn at another width goes
//! back over the rows the previous frame takes now that the terminal has
//! rewrapped it.

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::sync::{Arc, Mutex};

use dialoguer::console::{Term, measure_text_width};
use indicatif::TermLike;

/// The terminal side of the bars, shared with the board that ends it.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    term: Term,
    state: Arc<Mutex<State>>,
}

/// Where the current frame's writing stands.
#[derive(Debug, Default)]
struct State {
    /// What is written at the next flush.
    out: String,
    /// The next write: a row's text, or the padding after one.
    padding_next: bool,
    /// A row was written and its line break is still owed (the last row
    /// of a frame owes none until the frame ends for good).
    owed_break: bool,
    /// Nothing of this frame was written yet: its first move up is the one
    /// back over the previous frame.
    frame_start: bool,
    /// The width of each row of the frame being written, and of the last one.
    rows: Vec<usize>,
    last_rows: Vec<usize>,
    /// The terminal's width when the last frame was drawn.
    drawn_at: Option<u16>,
}

impl Frame {
    pub(crate) fn stderr() -> Frame {
        Frame {
            term: Term::stderr(),
            state: Arc::new(Mutex::new(State {
                frame_start: true,
                ..State::default()
            })),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The bars are done: the cursor goes to the start of the line below
    /// the last frame, where what follows (the report) begins.
    pub(crate) fn end(&self) {
        let mut st = self.state();
        if st.owed_break {
            st.out.push_str("\r\n");
        }
        st.owed_break = false;
        st.last_rows.clear();
        let out = std::mem::take(&mut st.out);
        drop(st);
        let _ = Self::write_now(&out);
    }

    fn write_now(s: &str) -> io::Result<()> {
        let mut err = io::stderr().lock();
        err.write_all(s.as_bytes())?;
        err.flush()
    }
}

/// Rows of `widths` on a terminal `width` columns wide that rewraps them.
fn rows_at(widths: &[usize], width: u16) -> usize {
    let width = usize::from(width.max(1));
    widths.iter().map(|w| w.div_ceil(width).max(1)).sum()
}

impl TermLike for Frame {
    fn width(&self) -> u16 {
        self.term.size().1
    }

    fn height(&self) -> u16 {
        self.term.size().0
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        let width = self.width();
        let mut st = self.state();
        st.owed_break = false;
        st.padding_next = false;
        let mut up = n;
        if std::mem::take(&mut st.frame_start) {
            // Back over the previous frame's `n + 1` bar rows (indicatif
            // counts neither the lines printed above the bars nor the row
            // the cursor is on) as the terminal holds them now.
            if st.drawn_at.is_some_and(|w| w != width) && n < st.last_rows.len() {
                let from = st.last_rows.len() - (n + 1);
                up = rows_at(&st.last_rows[from..], width).saturating_sub(1);
            }
        }
        if up > 0 {
            let _ = write!(st.out, "\x1b[{up}A");
        }
        Ok(())
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        if n > 0 {
            let _ = write!(self.state().out, "\x1b[{n}B");
        }
        Ok(())
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        if n > 0 {
            let _ = write!(self.state().out, "\x1b[{n}C");
        }
        Ok(())
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        if n > 0 {
            let _ = write!(self.state().out, "\x1b[{n}D");
        }
        Ok(())
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        let mut st = self.state();
        st.frame_start = false;
        st.out.push_str(s);
        st.out.push_str("\r\n");
        Ok(())
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        let mut st = self.state();
        st.frame_start = false;
        if s == "\r" && !st.padding_next {
            st.out.push('\r');
            return Ok(());
        }
        if st.padding_next {
            // The padding to the terminal's width: an erase to the end of
            // the row instead (none when the row fills it: an erase there
            // would take the row's last character).
            st.padding_next = false;
            if !s.is_empty() {
                st.out.push_str("\x1b[K");
            }
            st.owed_break = true;
            return Ok(());
        }
        if std::mem::take(&mut st.owed_break) {
            st.out.push_str("\r\n");
        }
        st.out.push_str(s);
        let width = measure_text_width(s);
        st.rows.push(width);
        st.padding_next = true;
        Ok(())
    }

    fn clear_line(&self) -> io::Result<()> {
        let mut st = self.state();
        st.frame_start = false;
        st.owed_break = false;
        st.padding_next = false;
        st.out.push_str("\r\x1b[2K");
        Ok(())
    }

    fn flush(&self) -> io::Result<()> {
        let width = self.width();
        let mut st = self.state();
        // Whatever stood below the frame (an older, longer one) goes.
        if !st.rows.is_empty() {
            st.out.push_str("\x1b[J");
        }
        st.last_rows = std::mem::take(&mut st.rows);
        st.drawn_at = Some(width);
        st.frame_start = true;
        st.padding_next = false;
        let out = std::mem::take(&mut st.out);
        drop(st);
        Self::write_now(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrapped_frame_takes_the_rows_its_lines_need_now() {
        assert_eq!(rows_at(&[100, 40, 0], 120), 3);
        assert_eq!(rows_at(&[100, 40, 0], 70), 4);
        assert_eq!(rows_at(&[140], 70), 2);
        assert_eq!(rows_at(&[141], 70), 3);
    }
}
