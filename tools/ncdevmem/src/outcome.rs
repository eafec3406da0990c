//! How a mode's run ended, and the exit status that says so.

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    ValidationFailed,
    Interrupted,
}

impl Outcome {
    /// The process's exit status: 0, 1, or 128 plus the signal that
    /// interrupted the run (`SIGINT` if none was recorded), as a shell
    /// reports a process a signal ended.
    pub fn exit_status(self, signal: Option<i32>) -> u8 {
        match self {
            Outcome::Ok => 0,
            Outcome::ValidationFailed => 1,
            Outcome::Interrupted => 128 + signal.unwrap_or(libc::SIGINT) as u8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_status_is_zero_one_or_128_plus_the_signal() {
        assert_eq!(Outcome::Ok.exit_status(Some(libc::SIGTERM)), 0);
        assert_eq!(Outcome::ValidationFailed.exit_status(None), 1);
        assert_eq!(Outcome::Interrupted.exit_status(Some(libc::SIGTERM)), 143);
        assert_eq!(Outcome::Interrupted.exit_status(None), 130);
    }
}
