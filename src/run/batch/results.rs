//! A downloaded batch's answers on disk, one JSON line per request, as rubricate reads them
//! whatever the provider: `{"id", "text", "input_tokens", "output_tokens", "logprobs"}` for
//! a reply, `{"id", "error", "kind", "status"}` for a request that got none. Written whole
//! (temporary file, sync, rename) once the batch ended, so a kill mid-download leaves the
//! previous state and the download is simply done again.

use std::io::{BufRead as _, Write as _};
use std::path::Path;

use serde_json::{Value, json};

use super::super::Error;
use crate::llm::batch::Answer;
use crate::llm::{ChatResponse, LlmError};

/// One answer as a line (no newline).
pub fn line(id: &str, answer: &Answer) -> String {
    match answer {
        Ok(r) => {
            let mut v = r.stored();
            v["id"] = json!(id);
            v.to_string()
        }
        Err(e) => {
            let (kind, status) = match e {
                LlmError::RateLimited { .. } => ("rate_limited", 429),
                LlmError::Server { status, .. } => ("server", *status),
                LlmError::Auth { status, .. } => ("auth", *status),
                LlmError::Request { status, .. } => ("request", *status),
                LlmError::TooLarge { .. } => ("too_large", 0),
                LlmError::BadResponse(_) => ("bad_response", 0),
                _ => ("unanswered", 0),
            };
            json!({"id": id, "error": message(e), "kind": kind, "status": status}).to_string()
        }
    }
}

/// The error's own message (not its display, which adds the status).
fn message(e: &LlmError) -> String {
    match e {
        LlmError::Server { message, .. } | LlmError::Request { message, .. } => message.clone(),
        LlmError::Auth { key_var, .. } => key_var.clone(),
        LlmError::TooLarge { limit } => limit.to_string(),
        LlmError::BadResponse(m) | LlmError::Unanswered(m) => m.clone(),
        other => other.to_string(),
    }
}

fn answer_of(v: &Value) -> Option<Answer> {
    if let Some(response) = ChatResponse::from_stored(v) {
        return Some(Ok(response));
    }
    let message = v.get("error")?.as_str()?.to_owned();
    let status = v
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(0);
    Some(Err(match v.get("kind").and_then(Value::as_str)? {
        "rate_limited" => LlmError::RateLimited { retry_after: None },
        "server" => LlmError::Server { status, message },
        "auth" => LlmError::Auth {
            status,
            key_var: message,
        },
        "request" => LlmError::Request { status, message },
        "too_large" => LlmError::TooLarge {
            limit: message.parse().unwrap_or(0),
        },
        "bad_response" => LlmError::BadResponse(message),
        _ => LlmError::Unanswered(message),
    }))
}

/// A results line's id and answer; `None` when the line is damaged.
pub fn parse_line(line: &[u8]) -> Option<(String, Answer)> {
    let v: Value = serde_json::from_slice(line).ok()?;
    Some((v.get("id")?.as_str()?.to_owned(), answer_of(&v)?))
}

/// Reads a results file, handing each answer to `each` with where its line starts and
/// how long it is (to be read again from there: [`parse_line`]).
pub fn read(path: &Path, each: &mut dyn FnMut(&str, Answer, u64, usize)) -> Result<(), Error> {
    let file = std::fs::File::open(path).map_err(|e| {
        Error::input(format!(
            "{}: cannot read a batch's results ({e}); `rubricate runs resume` downloads them again only while the provider keeps them",
            path.display()
        ))
    })?;
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
    let mut line = Vec::new();
    let mut offset = 0u64;
    for n in 1.. {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        if read == 0 {
            break;
        }
        let Some((id, answer)) = parse_line(&line) else {
            return Err(Error::input(format!(
                "{}:{n}: a batch result line is damaged; delete the file and run `rubricate runs resume` to download it again",
                path.display(),
            )));
        };
        each(&id, answer, offset, read);
        offset += read as u64;
    }
    Ok(())
}

/// Writes answers to a results file as they come (committed by [`Writer::commit`]).
pub struct Writer {
    file: crate::core::atomic::AtomicFile,
}

impl Writer {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            file: crate::core::atomic::AtomicFile::create(path)?,
        })
    }

    pub fn push(&mut self, id: &str, answer: &Answer) -> std::io::Result<()> {
        writeln!(self.file, "{}", line(id, answer))
    }

    pub fn commit(self) -> std::io::Result<()> {
        self.file.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_errors_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let all: Vec<(String, Answer)> = vec![
            (
                "a-0".into(),
                Ok(ChatResponse {
                    text: "{\"verdict\": true}".into(),
                    input_tokens: 7,
                    output_tokens: 3,
                    reasoning_tokens: 2,
                    logprobs: vec![("t".into(), -0.5)],
                }),
            ),
            (
                "b-0".into(),
                Err(LlmError::Request {
                    status: 400,
                    message: "bad model".into(),
                }),
            ),
            ("c-1".into(), Err(LlmError::Unanswered("expired".into()))),
            (
                "d-0".into(),
                Err(LlmError::Server {
                    status: 503,
                    message: "busy".into(),
                }),
            ),
        ];
        let mut w = Writer::create(&path).unwrap();
        for (id, a) in &all {
            w.push(id, a).unwrap();
        }
        w.commit().unwrap();
        let mut back = Vec::new();
        read(&path, &mut |id, a, _, _| back.push((id.to_owned(), a))).unwrap();
        assert_eq!(back, all);
    }

    #[test]
    fn a_damaged_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, "{\"id\":\"a-0\",\"text\":\"x\"}\n{\"id\":\n").unwrap();
        let e = read(&path, &mut |_, _, _, _| {}).unwrap_err();
        assert!(e.to_string().contains("r.jsonl:2:"), "{e}");
    }
}
