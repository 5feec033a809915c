//! The formats the Results pane exports a run in (the export itself is the runtime's:
//! `runtime/export.rs`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Csv,
    Jsonl,
    Markdown,
    /// The run as one self-contained HTML page (`rubricate report`'s).
    Html,
}

impl ExportFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Markdown => "md",
            ExportFormat::Html => "html",
        }
    }
}
