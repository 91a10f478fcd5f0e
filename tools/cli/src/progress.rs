//! Progress drawn on a terminal, shared by `runs get`, `tail --run` and `batch`: whether to
//! draw at all, a run's tasks as a bar split by status with their counts as text, and the live
//! bar of `tail` and `batch` on standard error.
//!
//! A bar is drawn only on a terminal, never with `--json`, and not when `NO_COLOR` is set (to
//! anything but empty) or `TERM` is `dumb`: then the plain lines are printed as before. The live
//! bars go to standard error, so standard output keeps its lines, parseable, wherever it goes.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

/// Cells of a bar.
const WIDTH: u64 = 30;

/// Whether this terminal stream may carry a bar: it is a terminal, `NO_COLOR` is not set, and
/// `TERM` is not `dumb`.
pub(crate) fn drawable(stream: &impl IsTerminal) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
    stream.is_terminal() && !no_color && !dumb
}

/// A run's tasks by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) queued: u64,
    pub(crate) running: u64,
    pub(crate) succeeded: u64,
    pub(crate) failed: u64,
    pub(crate) canceled: u64,
}

impl Tally {
    /// The ended ones: succeeded, failed or canceled.
    pub(crate) fn done(&self) -> u64 {
        self.succeeded + self.failed + self.canceled
    }

    pub(crate) fn total(&self) -> u64 {
        self.done() + self.queued + self.running
    }

    /// The counts as text: `3/5 done · succeeded 2 · failed 1 · canceled 0 · running 1 · queued 1`.
    pub(crate) fn text(&self) -> String {
        format!(
            "{}/{} done · succeeded {} · failed {} · canceled {} · running {} · queued {}",
            self.done(),
            self.total(),
            self.succeeded,
            self.failed,
            self.canceled,
            self.running,
            self.queued
        )
    }

    /// A bar of [`WIDTH`] cells split by status (succeeded, failed, canceled, running, then
    /// queued), each its own glyph and colour (the counts beside it say the same in words).
    pub(crate) fn bar(&self) -> String {
        let parts = [
            (self.succeeded, '█', "32"),
            (self.failed, '▓', "31"),
            (self.canceled, '▒', "33"),
            (self.running, '░', "36"),
            (self.queued, '·', "2"),
        ];
        let total = self.total();
        let mut drawn = String::from("[");
        let (mut counted, mut cells) = (0, 0);
        for (count, glyph, colour) in parts {
            counted += count;
            // Each part ends where its running sum falls on the bar: the cells add up to WIDTH.
            let end = (counted * WIDTH + total / 2).checked_div(total).unwrap_or(0);
            let mine = end - cells;
            cells = end;
            if mine > 0 {
                let run = glyph.to_string().repeat(mine as usize);
                drawn.push_str(&format!("\x1b[{colour}m{run}\x1b[0m"));
            }
        }
        drawn.push_str(&" ".repeat((WIDTH - cells) as usize));
        drawn.push(']');
        drawn
    }
}

/// A live bar on standard error (see the module's rule), or a hidden one that draws nothing.
/// Dropped without [`leave`] (a command that failed), it is cleared, so the error's line is
/// alone.
pub(crate) fn live(json: bool, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
        .with_finish(ProgressFinish::AndClear);
    if json || !drawable(&std::io::stderr()) {
        return bar;
    }
    bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar
}

/// End a live bar and leave it with its last figures; what follows starts on the next line.
pub(crate) fn leave(bar: &ProgressBar) {
    bar.finish();
    if !bar.is_hidden() {
        eprintln!();
    }
}

/// A plain line printed above a live bar (the bar is cleared, the line printed, the bar drawn
/// again below it).
pub(crate) fn println(bar: &ProgressBar, line: &str) {
    bar.suspend(|| println!("{line}"));
}

#[cfg(test)]
mod tests {
    use super::Tally;

    fn cells(bar: &str, glyph: char) -> usize {
        bar.chars().filter(|c| *c == glyph).count()
    }

    #[test]
    fn a_bar_is_split_by_status_in_proportion_and_fills_its_width() {
        let tally = Tally { succeeded: 10, failed: 5, canceled: 0, running: 5, queued: 10 };
        let bar = tally.bar();
        let counted: Vec<usize> = ['█', '▓', '▒', '░', '·'].iter().map(|g| cells(&bar, *g)).collect();
        assert_eq!(counted, [10, 5, 0, 5, 10]);
        assert_eq!(tally.text(), "15/30 done · succeeded 10 · failed 5 · canceled 0 · running 5 · queued 10");
        let empty = Tally::default().bar();
        assert_eq!(empty, format!("[{}]", " ".repeat(30)), "no task: an empty bar");
        let one_third = Tally { succeeded: 1, queued: 2, ..Tally::default() }.bar();
        assert_eq!((cells(&one_third, '█'), cells(&one_third, '·')), (10, 20));
    }
}
