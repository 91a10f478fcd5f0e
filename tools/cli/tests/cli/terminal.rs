//! `aitasks` on a pseudo-terminal, as a user runs it: its standard input, output and error are
//! the terminal (200 columns), and what it writes is played on a small screen model (lines,
//! the cursor, the escape sequences a progress bar uses), so a test reads what the user sees.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::Stdio;
use std::time::Duration;

use aitasks_testkit::Stack;
use rustix::fs::{Mode, OFlags};
use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcsetwinsize, Winsize};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// A running `aitasks` on a terminal of its own.
pub(crate) struct Terminal {
    child: tokio::process::Child,
    chunks: mpsc::UnboundedReceiver<Vec<u8>>,
    written: Vec<u8>,
    ended: bool,
}

impl Terminal {
    /// Start `aitasks` against the stack with this token, these extra variables (after
    /// `TERM=xterm-256color`) and arguments.
    pub(crate) fn start(stack: &Stack, token: &str, env: &[(&str, &str)], args: &[&str]) -> Terminal {
        let main = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
        grantpt(&main).unwrap();
        unlockpt(&main).unwrap();
        let name = ptsname(&main, Vec::new()).unwrap();
        let flags = OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC;
        let side: OwnedFd = rustix::fs::open(name.as_c_str(), flags, Mode::empty()).unwrap();
        tcsetwinsize(&side, Winsize { ws_row: 50, ws_col: 200, ws_xpixel: 0, ws_ypixel: 0 }).unwrap();
        let url = format!("http://{}", stack.server.address);
        let mut vars =
            vec![("AITASKS_URL", url.as_str()), ("AITASKS_TOKEN", token), ("TERM", "xterm-256color")];
        vars.extend_from_slice(env);
        let mut command = crate::command(&vars, args);
        command
            .stdin(Stdio::from(side.try_clone().unwrap()))
            .stdout(Stdio::from(side.try_clone().unwrap()))
            .stderr(Stdio::from(side))
            .kill_on_drop(true);
        let child = command.spawn().expect("start aitasks");
        // The command's copies of the terminal's side: once the process has exited, no one
        // holds it, and reading the main side ends.
        drop(command);
        let (sender, chunks) = mpsc::unbounded_channel();
        let mut reader = std::fs::File::from(main);
        std::thread::spawn(move || {
            let mut buffer = [0; 4096];
            while let Ok(n @ 1..) = reader.read(&mut buffer) {
                if sender.send(buffer[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Terminal { child, chunks, written: Vec::new(), ended: false }
    }

    /// Everything written so far, escape sequences and all.
    pub(crate) fn raw(&self) -> String {
        String::from_utf8_lossy(&self.written).into_owned()
    }

    /// The screen now: its lines, trailing blanks trimmed, blank lines at the end left out.
    pub(crate) fn screen(&self) -> Vec<String> {
        screen(&self.raw())
    }

    /// Read until the screen holds a line containing `wanted`; panic with the screen at the
    /// deadline.
    pub(crate) async fn wait_for(&mut self, wanted: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.screen().iter().any(|line| line.contains(wanted)) {
            let chunk = tokio::time::timeout_at(deadline, self.chunks.recv()).await;
            match chunk {
                Ok(Some(bytes)) => self.written.extend_from_slice(&bytes),
                Ok(None) if !self.ended => self.ended = true,
                _ => panic!("no line with {wanted:?} on the screen:\n{}", self.screen().join("\n")),
            }
        }
    }

    /// Read until the process has closed the terminal, and its exit status.
    pub(crate) async fn finish(&mut self, within: Duration) -> i32 {
        let deadline = Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.chunks.recv()).await {
                Ok(Some(bytes)) => self.written.extend_from_slice(&bytes),
                Ok(None) => break,
                Err(_) => panic!("still running at the deadline:\n{}", self.screen().join("\n")),
            }
        }
        let status = tokio::time::timeout_at(deadline, self.child.wait()).await.unwrap().unwrap();
        status.code().expect("exited, not killed")
    }
}

/// The screen `text` leaves on a terminal: printable characters overwrite at the cursor; `\r`,
/// `\n`, and the CSI sequences for cursor up/down/column, erase line and erase below move or
/// clear; colours and modes are dropped.
pub(crate) fn screen(text: &str) -> Vec<String> {
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut column) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => column = 0,
            '\n' => {
                row += 1;
                if lines.len() <= row {
                    lines.push(Vec::new());
                }
            }
            '\x1b' if chars.peek() == Some(&'[') => {
                chars.next();
                let mut parameters = String::new();
                let mut last = '\0';
                for next in chars.by_ref() {
                    if ('@'..='~').contains(&next) {
                        last = next;
                        break;
                    }
                    parameters.push(next);
                }
                let n: usize = parameters.trim_start_matches('?').parse().unwrap_or(0);
                match last {
                    'A' => row = row.saturating_sub(n.max(1)),
                    'B' => row += n.max(1),
                    'G' => column = n.saturating_sub(1),
                    'K' if n == 2 => lines[row].clear(),
                    'K' => lines[row].truncate(column),
                    'J' => {
                        lines[row].truncate(column);
                        lines.truncate(row + 1);
                    }
                    _ => {}
                }
                while lines.len() <= row {
                    lines.push(Vec::new());
                }
            }
            '\x1b' => {
                chars.next();
            }
            c if c.is_control() => {}
            c => {
                let line = &mut lines[row];
                while line.len() < column {
                    line.push(' ');
                }
                if column < line.len() {
                    line[column] = c;
                } else {
                    line.push(c);
                }
                column += 1;
            }
        }
    }
    let mut shown: Vec<String> =
        lines.into_iter().map(|l| l.into_iter().collect::<String>().trim_end().to_owned()).collect();
    while shown.last().is_some_and(|l| l.is_empty()) {
        shown.pop();
    }
    shown
}

#[test]
fn the_screen_model_plays_a_redrawn_bar() {
    let text = "[##  ] 1/2\r\x1b[2K[####] 2/2\nline\n\x1b[1A\r\x1b[2K\x1b[32mdone\x1b[0m\n";
    assert_eq!(screen(text), ["[####] 2/2", "done"]);
}
