//! The progress line a long run keeps rewriting on stderr.

use std::time::{Duration, Instant};

/// A progress line on stderr, rewritten every 2 s, ended when dropped if
/// it was ever printed.
pub struct Progress {
    start: Instant,
    last: Option<Instant>,
}

/// How long a progress line stands before the next.
const EVERY: Duration = Duration::from_secs(2);

impl Progress {
    pub fn new(start: Instant) -> Self {
        Self { start, last: None }
    }

    /// Prints `line(seconds since the start)` if 2 s passed since the last
    /// print (or the start).
    pub fn tick(&mut self, line: impl FnOnce(f64) -> String) {
        if let Some(text) = self.due(line) {
            eprint!("\r{text}   ");
        }
    }

    /// The line to print now, if one is due (it then counts as printed).
    fn due(&mut self, line: impl FnOnce(f64) -> String) -> Option<String> {
        let since = self.last.unwrap_or(self.start);
        if since.elapsed() < EVERY {
            return None;
        }
        self.last = Some(Instant::now());
        Some(line(self.start.elapsed().as_secs_f64()))
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.last.is_some() {
            eprintln!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_due_two_seconds_after_the_start_then_after_the_last_one() {
        let mut fresh = Progress::new(Instant::now());
        assert_eq!(fresh.due(|_| "early".into()), None);
        assert!(fresh.last.is_none());

        let mut p = Progress::new(Instant::now() - Duration::from_secs(3));
        let mut secs = 0.0;
        let line = p.due(|s| {
            secs = s;
            format!("{s:.0} s in")
        });
        assert_eq!(line.as_deref(), Some("3 s in"));
        assert!(secs >= 3.0);
        // Just printed: the next is 2 s away.
        assert_eq!(p.due(|_| "again".into()), None);
    }
}
