//! Exit codes: one per kind of outcome, documented in `--help`.

use std::process::ExitCode;

/// How `tessera` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: the call completed.
    Success,
    /// 1: the tool answered with `isError: true`.
    ToolError,
    /// 2: the command line was wrong (also clap's own usage errors).
    Usage,
    /// 3: the call completed after the user declined or cancelled a form.
    Refused,
    /// 4: protocol, transport or server error.
    Failure,
    /// 5: the server asked for input nobody could give (no terminal, no
    /// scripted answer), or did not accept a scripted answer.
    Unanswered,
    /// 6: the call did not finish within its bounds: the server did not
    /// answer within `--timeout`, a task not within `--task-wait` (it was
    /// cancelled), or the server kept asking past `--max-rounds`.
    Unfinished,
}

/// The exit codes as shown in `--help`.
pub const HELP: &str = "Exit codes:
  0  success
  1  the tool reported an error (isError)
  2  usage error
  3  completed, but a form was declined or cancelled
  4  protocol, transport or server error
  5  input was needed that nobody could give (no terminal and no scripted
     answer), or the server did not accept a scripted answer (it asked again)
  6  the call did not finish within its bounds: no answer within --timeout, a
     task unfinished within --task-wait (it was cancelled), or the server kept
     asking past --max-rounds";

impl Exit {
    /// Prints `message` (which may quote a server) to stderr and returns the code.
    pub fn report(self, message: &str) -> ExitCode {
        eprintln!("tessera: {}", crate::shown::text(message));
        self.into()
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(match e {
            Exit::Success => 0,
            Exit::ToolError => 1,
            Exit::Usage => 2,
            Exit::Refused => 3,
            Exit::Failure => 4,
            Exit::Unanswered => 5,
            Exit::Unfinished => 6,
        })
    }
}
