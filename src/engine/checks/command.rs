//! The `command` check: runs a program with the item as JSON on stdin and reads a verdict
//! (`MET/UNMET/CANNOT_ASSESS`, a level id, an option label or a number) from its stdout.
//! It runs only when the workspace config or `--allow-commands` opts in.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Args, CheckError, SpecError};
use crate::model::Item;

/// A `command` check: a program run on the submission, printing its verdict.
#[derive(Debug, Clone)]
pub struct CommandCheck {
    /// The program to run (never through a shell).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// How long it may run before it is stopped.
    pub timeout: Duration,
}

/// Output past this many bytes is not read (a verdict is one short line).
const MAX_OUTPUT: u64 = 64 * 1024;

/// A `command` check from its `args` (`program`, `args`, `timeout`).
pub fn compile(args: &mut Args<'_>) -> Result<CommandCheck, SpecError> {
    let program = args.required_string("program")?;
    if program.trim().is_empty() {
        return Err(SpecError::new("args.program", "`program` is empty"));
    }
    let program_args = args.strings("args")?.unwrap_or_default();
    let secs = args.number("timeout_secs")?.unwrap_or(10.0);
    if !(secs > 0.0 && secs <= 3600.0) {
        return Err(SpecError::new(
            "args.timeout_secs",
            "`timeout_secs` must be between 0 and 3600",
        ));
    }
    Ok(CommandCheck {
        program,
        args: program_args,
        timeout: Duration::from_secs_f64(secs),
    })
}

/// Reads a stream to its end, keeping the first [`MAX_OUTPUT`] bytes.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(
    stream: Option<&mut R>,
) -> std::io::Result<Vec<u8>> {
    let mut kept = Vec::new();
    let Some(stream) = stream else {
        return Ok(kept);
    };
    (&mut *stream)
        .take(MAX_OUTPUT)
        .read_to_end(&mut kept)
        .await?;
    tokio::io::copy(stream, &mut tokio::io::sink()).await?;
    Ok(kept)
}

impl CommandCheck {
    /// Runs the program; returns the first non-empty line of its output.
    pub async fn run(&self, item: &Item) -> Result<String, CheckError> {
        let payload = json!({
            "id": item.id,
            "submission": item.submission,
            "prompt": item.prompt,
            "reference": item.reference,
            "metadata": Value::Object(item.metadata.clone()),
        })
        .to_string();
        let mut child = tokio::process::Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| CheckError::Start {
                program: self.program.clone(),
                source,
            })?;
        let mut stdin = child.stdin.take();
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let work = async {
            if let Some(mut s) = stdin.take() {
                // A program that exits without reading its input is not an error.
                let _ = s.write_all(payload.as_bytes()).await;
                drop(s);
            }
            // Both streams are drained at once so a chatty child never blocks on a full pipe.
            let (out, err) =
                tokio::join!(read_capped(stdout.as_mut()), read_capped(stderr.as_mut()));
            let pipe = |source| CheckError::Pipe {
                program: self.program.clone(),
                source,
            };
            let (out, err) = (out.map_err(pipe)?, err.map_err(pipe)?);
            let status = child.wait().await.map_err(pipe)?;
            Ok::<_, CheckError>((status, out, err))
        };
        let (status, out, err) =
            tokio::time::timeout(self.timeout, work)
                .await
                .map_err(|_| CheckError::TimedOut {
                    program: self.program.clone(),
                    after: self.timeout,
                })??;
        if !status.success() {
            let tail: String = String::from_utf8_lossy(&err)
                .lines()
                .last()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect();
            return Err(CheckError::Exited {
                program: self.program.clone(),
                status,
                stderr_tail: tail,
            });
        }
        String::from_utf8_lossy(&out)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| CheckError::NoVerdict {
                program: self.program.clone(),
            })
    }
}
