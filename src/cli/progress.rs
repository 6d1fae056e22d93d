//! Progress on standard error for the long commands: an `indicatif` bar
//! (counter and ETA) when standard error is a terminal, else plain lines
//! with `[k/n]` and an ETA (once there is a pace to draw it from) — one at the start, the end and each failure,
//! and at most one every few seconds between — never a `\r`. Nothing
//! with `-q`.

use super::{Ui, Verbosity};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Seconds between two plain progress lines.
const LINE_EVERY: Duration = Duration::from_secs(5);

enum Mode {
    Off,
    Bar(ProgressBar),
    Lines { last: Option<Instant> },
}

/// A counter from 0 to a total, shown as it moves.
pub(crate) struct Progress {
    mode: Mode,
    started: Instant,
}

impl Progress {
    /// The form `ui` and standard error call for.
    pub(crate) fn new(ui: &Ui) -> Progress {
        let mode = if ui.verbosity < Verbosity::Normal {
            Mode::Off
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30.cyan/blue} {pos}/{len} {msg} [{elapsed_precise}, ETA {eta}]",
                )
                .expect("a valid template"),
            );
            // Redrawn every second, so the clock moves between events.
            bar.enable_steady_tick(Duration::from_secs(1));
            Mode::Bar(bar)
        } else {
            Mode::Lines { last: None }
        };
        Progress {
            mode,
            started: Instant::now(),
        }
    }

    /// A line of its own (a note, a warning), above the bar if there is one.
    pub(crate) fn note(&self, line: impl std::fmt::Display) {
        match &self.mode {
            Mode::Off => {}
            Mode::Bar(b) => b.println(format!("polytune: {line}")),
            Mode::Lines { .. } => eprintln!("polytune: {line}"),
        }
    }

    /// What is running now, on the bar only (plain lines say it with the
    /// next count).
    pub(crate) fn doing(&self, what: &str) {
        if let Mode::Bar(b) = &self.mode {
            b.set_message(what.to_string());
        }
    }

    /// `done` of `total` are through, the last being `what`. `eta` is the
    /// caller's estimate of the seconds left; without one it is drawn from
    /// the pace so far. `important` forces a plain line (a failure).
    pub(crate) fn set(
        &mut self,
        done: usize,
        total: usize,
        what: &str,
        eta: Option<f64>,
        important: bool,
    ) {
        let started = self.started;
        match &mut self.mode {
            Mode::Off => {}
            Mode::Bar(b) => {
                b.set_length(total as u64);
                b.set_position(done as u64);
                b.set_message(what.to_string());
            }
            Mode::Lines { last } => {
                let due = last.is_none_or(|t| t.elapsed() >= LINE_EVERY);
                if !(due || important || done >= total) {
                    return;
                }
                *last = Some(Instant::now());
                if done == 0 {
                    // No pace yet to draw an ETA from.
                    eprintln!("polytune: [0/{total}] {what}");
                    return;
                }
                let eta = eta.unwrap_or_else(|| {
                    let each = started.elapsed().as_secs_f64() / done as f64;
                    each * total.saturating_sub(done) as f64
                });
                eprintln!("polytune: [{done}/{total}] {what}; ETA {}", duration(eta));
            }
        }
    }

    /// Removes the bar (plain lines need no ending).
    pub(crate) fn finish(&self) {
        if let Mode::Bar(b) = &self.mode {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Runs `work`, which reports `(done, total)` from any thread, with a
/// counter of `what` on standard error.
pub(crate) fn counting<T>(
    ui: &Ui,
    what: &str,
    work: impl FnOnce(&(dyn Fn(usize, usize) + Sync)) -> T,
) -> T {
    let p = std::sync::Mutex::new(Progress::new(ui));
    p.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .doing(what);
    let out = work(&|done, total| {
        p.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .set(done, total, what, None, false)
    });
    p.into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .finish();
    out
}

/// `1 h 05 min`, `12 min`, `40 s`.
pub(crate) fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match (s / 3600, (s % 3600) / 60) {
        (0, 0) => format!("{s} s"),
        (0, m) => format!("{m} min"),
        (h, m) => format!("{h} h {m:02} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(40.2), "40 s");
        assert_eq!(duration(720.0), "12 min");
        assert_eq!(duration(3900.0), "1 h 05 min");
    }
}
