//! Server-sent events, read incrementally: bytes arrive in any split, events come out whole.
//! Kept by hand (a few dozen lines) so that every byte a server sends is bounded by the
//! reply cap as it arrives, which a general SSE client does not do.
//! Both providers stream this way (`OpenAI`: `data:` lines ending with `[DONE]`; Anthropic:
//! named `event:`s ending with `message_stop`).

/// One event: its name (empty when the server gave none) and its data lines joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub data: String,
}

/// Turns arriving bytes into events.
#[derive(Debug, Default)]
pub struct Reader {
    buffer: Vec<u8>,
    name: String,
    data: Vec<String>,
}

impl Reader {
    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() || !self.name.is_empty() {
                    events.push(Event {
                        name: std::mem::take(&mut self.name),
                        data: std::mem::take(&mut self.data).join("\n"),
                    });
                }
                continue;
            }
            if line.starts_with(':') {
                continue; // a comment (keep-alive)
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => value.clone_into(&mut self.name),
                "data" => self.data.push(value.to_owned()),
                _ => {} // `id`, `retry`: not used by either provider
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_survive_any_split() {
        let text = b"event: a\ndata: {\"x\":1}\n\n: keep-alive\n\ndata: one\r\ndata: two\r\n\r\ndata: [DONE]\n\n";
        for cut in 0..text.len() {
            let mut r = Reader::default();
            let mut events = r.push(&text[..cut]);
            events.extend(r.push(&text[cut..]));
            assert_eq!(
                events,
                vec![
                    Event {
                        name: "a".into(),
                        data: "{\"x\":1}".into()
                    },
                    Event {
                        name: String::new(),
                        data: "one\ntwo".into()
                    },
                    Event {
                        name: String::new(),
                        data: "[DONE]".into()
                    },
                ],
                "cut at {cut}"
            );
        }
    }
}
