//! `tool_trajectory`: a conversation's tool calls against an expected list of calls,
//! scored as agentv's tool-trajectory grader (@agentv/core 4.42.4) scores them — a share
//! of the expected calls found (and of the latency limits kept), so a scale criterion gets
//! partial credit and a binary one is MET only when the whole trajectory holds.
//!
//! Modes: `exact` (the same calls at the same positions, no more), `in_order` (the
//! expected calls in this order, others between them allowed), `any_order` (each expected
//! call somewhere, each call used once; or with `minimums`, each tool called at least so
//! often), `superset` (agentv's name for `any_order` with `expected`) and `subset` (every
//! call is one of the expected ones).

use serde_json::Value;

use super::tools::{ArgsMatch, calls, shown};
use super::{Args, Check, CheckError, CheckInput, CheckOutput, SpecError};
use crate::model::{Criterion, Kind, ToolCall, Verdict};

/// How the calls are compared with the expected ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Exact,
    InOrder,
    AnyOrder,
    Subset,
}

/// One expected call.
#[derive(Debug, Clone)]
struct Step {
    tool: String,
    /// The arguments expected; `None` (or `any`) matches any.
    args: Option<Value>,
    /// This call's own way of matching arguments, over the check's.
    args_match: Option<ArgsMatch>,
    /// The longest the call may take, when the trace gives durations.
    max_duration_ms: Option<f64>,
}

#[derive(Debug)]
struct Trajectory {
    mode: Mode,
    expected: Vec<Step>,
    /// For `any_order` without `expected`: each tool and the fewest calls it needs.
    minimums: Option<Vec<(String, f64)>>,
    args_match: ArgsMatch,
    negate: bool,
    kind: Kind,
}

/// What the comparison found: the share of credit, and a line per expectation.
struct Scored {
    score: f64,
    lines: Vec<String>,
}

pub fn tool_trajectory(
    args: &mut Args<'_>,
    criterion: &Criterion,
) -> Result<Box<dyn Check>, SpecError> {
    let mode = match args.string("mode")?.as_deref() {
        None | Some("in_order") => Mode::InOrder,
        Some("exact") => Mode::Exact,
        Some("any_order" | "superset") => Mode::AnyOrder,
        Some("subset") => Mode::Subset,
        Some(other) => {
            return Err(SpecError::new(
                "args.mode",
                format!(
                    "'{other}' is not a mode; give exact, in_order, any_order, superset or subset"
                ),
            ));
        }
    };
    let args_match = match args.get("args_match") {
        None => ArgsMatch::Exact,
        Some(v) => ArgsMatch::parse(v).map_err(|m| SpecError::new("args.args_match", m))?,
    };
    let expected = match args.get("expected") {
        None => None,
        Some(Value::Array(list)) => Some(
            list.iter()
                .enumerate()
                .map(|(i, v)| step(i, v))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => {
            return Err(SpecError::new(
                "args.expected",
                "`expected` must be a list of tool names or calls {tool, args}",
            ));
        }
    };
    let minimums = match args.get("minimums") {
        None => None,
        Some(Value::Object(m)) => Some(
            m.iter()
                .map(|(tool, n)| match n.as_f64() {
                    Some(n) if n >= 0.0 => Ok((tool.clone(), n)),
                    _ => Err(SpecError::new(
                        format!("args.minimums.{tool}"),
                        "a minimum must be a number of calls, 0 or more",
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => {
            return Err(SpecError::new(
                "args.minimums",
                "`minimums` must map tool names to the fewest calls each needs",
            ));
        }
    };
    let negate = args.boolean("negate", false)?;
    let expected = match (mode, expected, &minimums) {
        (Mode::AnyOrder, None, Some(_)) => Vec::new(),
        (Mode::AnyOrder, Some(_), Some(_)) => {
            return Err(SpecError::new(
                "args",
                "give `expected` or `minimums` for any_order, not both",
            ));
        }
        (_, Some(e), None) => e,
        (Mode::AnyOrder, None, None) => {
            return Err(SpecError::new(
                "args",
                "any_order needs `expected` (the calls) or `minimums` (tool: fewest calls)",
            ));
        }
        (_, _, Some(_)) => {
            return Err(SpecError::new(
                "args.minimums",
                "`minimums` goes with mode any_order",
            ));
        }
        (_, None, None) => {
            return Err(SpecError::new(
                "args",
                "this check needs `expected` in args (the tool calls, in order)",
            ));
        }
    };
    Ok(Box::new(Trajectory {
        mode,
        expected,
        minimums,
        args_match,
        negate,
        kind: criterion.kind.clone(),
    }))
}

/// One expected call: a tool's name, or `{tool, args, args_match, max_duration_ms}`.
fn step(i: usize, v: &Value) -> Result<Step, SpecError> {
    let at = |f: &str| format!("args.expected[{i}]{f}");
    match v {
        Value::String(tool) if !tool.trim().is_empty() => Ok(Step {
            tool: tool.clone(),
            args: None,
            args_match: None,
            max_duration_ms: None,
        }),
        Value::Object(o) => {
            for key in o.keys() {
                if !["tool", "args", "args_match", "max_duration_ms"].contains(&key.as_str()) {
                    return Err(SpecError::new(
                        at(&format!(".{key}")),
                        format!(
                            "unknown field `{key}`; a call takes tool, args, args_match, max_duration_ms"
                        ),
                    ));
                }
            }
            let tool = match o.get("tool") {
                Some(Value::String(t)) if !t.trim().is_empty() => t.clone(),
                _ => {
                    return Err(SpecError::new(
                        at(".tool"),
                        "each call needs `tool`, the tool's name",
                    ));
                }
            };
            let args = match o.get("args") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s == "any" => None,
                Some(a @ Value::Object(_)) => Some(a.clone()),
                Some(_) => {
                    return Err(SpecError::new(
                        at(".args"),
                        "`args` must be an object of argument values, or any",
                    ));
                }
            };
            let args_match = o
                .get("args_match")
                .map(ArgsMatch::parse)
                .transpose()
                .map_err(|m| SpecError::new(at(".args_match"), m))?;
            let max_duration_ms = match o.get("max_duration_ms") {
                None | Some(Value::Null) => None,
                Some(Value::Number(n)) if n.as_f64().is_some_and(|d| d >= 0.0) => n.as_f64(),
                Some(_) => {
                    return Err(SpecError::new(
                        at(".max_duration_ms"),
                        "`max_duration_ms` must be a number of milliseconds, 0 or more",
                    ));
                }
            };
            Ok(Step {
                tool,
                args,
                args_match,
                max_duration_ms,
            })
        }
        _ => Err(SpecError::new(
            at(""),
            "must be a tool's name or a call {tool, args}",
        )),
    }
}

impl Trajectory {
    /// Whether `call` is the expected `step` (name, and arguments as matched).
    fn fits(&self, step: &Step, call: &ToolCall) -> bool {
        call.name == step.tool && self.args_fit(step, call)
    }

    fn args_fit(&self, step: &Step, call: &ToolCall) -> bool {
        let how = step.args_match.as_ref().unwrap_or(&self.args_match);
        step.args
            .as_ref()
            .is_none_or(|want| how.matches(want, call.arguments.as_ref()))
    }

    /// Sequence hits, latency hits and the latency limits that count (agentv leaves out
    /// a limit on a matched call whose trace gives no duration), into a score.
    fn score(&self, hits: usize, latency: (usize, usize), lines: Vec<String>) -> Scored {
        let limits = self
            .expected
            .iter()
            .filter(|s| s.max_duration_ms.is_some())
            .count();
        let total = self.expected.len() + limits - latency.1;
        let score = if total > 0 {
            (hits + latency.0) as f64 / total as f64
        } else {
            1.0
        };
        Scored { score, lines }
    }

    /// A matched call against its step's latency limit: (kept, skipped), and a line.
    fn latency(step: &Step, call: &ToolCall, tally: &mut (usize, usize), lines: &mut Vec<String>) {
        let Some(max) = step.max_duration_ms else {
            return;
        };
        match call.duration_ms {
            None => {
                tally.1 += 1;
                lines.push(format!(
                    "{}: no duration in the trace; its time limit is not counted",
                    step.tool
                ));
            }
            Some(d) if d <= max => {
                tally.0 += 1;
                lines.push(format!("{} took {d} ms (max {max} ms)", step.tool));
            }
            Some(d) => lines.push(format!("✗ {} took {d} ms (max {max} ms)", step.tool)),
        }
    }

    fn exact(&self, calls: &[&ToolCall]) -> Scored {
        let mut lines = Vec::new();
        let (mut hits, mut latency) = (0, (0, 0));
        if calls.len() != self.expected.len() {
            lines.push(format!(
                "✗ expected {} tool calls, got {}",
                self.expected.len(),
                calls.len()
            ));
        }
        for (i, step) in self.expected.iter().enumerate() {
            let n = i + 1;
            match calls.get(i) {
                None => lines.push(format!("✗ call #{n}: expected {}, got nothing", step.tool)),
                Some(call) if call.name != step.tool => lines.push(format!(
                    "✗ call #{n}: expected {}, got {}",
                    step.tool,
                    shown(call)
                )),
                Some(call) if !self.args_fit(step, call) => {
                    lines.push(format!(
                        "✗ call #{n}: {} — arguments do not match",
                        shown(call)
                    ));
                }
                Some(call) => {
                    hits += 1;
                    lines.push(format!("call #{n}: {}", shown(call)));
                    Self::latency(step, call, &mut latency, &mut lines);
                }
            }
        }
        self.score(hits, latency, lines)
    }

    /// agentv's scan: each expected call is looked for from where the last one was
    /// found; the first call of the right tool ends the search, its arguments wrong or not.
    fn in_order(&self, calls: &[&ToolCall]) -> Scored {
        let mut lines = Vec::new();
        let (mut hits, mut latency) = (0, (0, 0));
        let mut at = 0;
        for (i, step) in self.expected.iter().enumerate() {
            let from = at.min(calls.len());
            let Some(offset) = calls[from..].iter().position(|c| c.name == step.tool) else {
                at = calls.len();
                let after = if from == 0 {
                    String::new()
                } else {
                    format!(" after call #{from}")
                };
                lines.push(format!(
                    "✗ expected call {} ({}) not found{after}",
                    i + 1,
                    step.tool
                ));
                continue;
            };
            let found = at + offset;
            at = found + 1;
            let call = calls[found];
            if self.args_fit(step, call) {
                hits += 1;
                lines.push(format!(
                    "expected call {}: call #{at}: {}",
                    i + 1,
                    shown(call)
                ));
                Self::latency(step, call, &mut latency, &mut lines);
            } else {
                lines.push(format!(
                    "✗ expected call {}: call #{at}: {} — arguments do not match",
                    i + 1,
                    shown(call)
                ));
            }
        }
        self.score(hits, latency, lines)
    }

    fn any_order(&self, calls: &[&ToolCall]) -> Scored {
        let mut used = vec![false; calls.len()];
        let mut lines = Vec::new();
        for step in &self.expected {
            let found = (0..calls.len()).find(|&j| !used[j] && self.fits(step, calls[j]));
            match found {
                Some(j) => {
                    used[j] = true;
                    lines.push(format!(
                        "{}: call #{}: {}",
                        step.tool,
                        j + 1,
                        shown(calls[j])
                    ));
                }
                None => lines.push(format!("✗ {}: no matching call", step.tool)),
            }
        }
        let hits = used.iter().filter(|u| **u).count();
        let score = if self.expected.is_empty() {
            1.0
        } else {
            hits as f64 / self.expected.len() as f64
        };
        Scored { score, lines }
    }

    fn minimums(minimums: &[(String, f64)], calls: &[&ToolCall]) -> Scored {
        if minimums.is_empty() {
            return Scored {
                score: 1.0,
                lines: vec!["no tool minimums given".into()],
            };
        }
        let mut kept = 0usize;
        let mut lines = Vec::new();
        for (tool, least) in minimums {
            let n = calls.iter().filter(|c| c.name == *tool).count();
            let ok = n as f64 >= *least;
            kept += usize::from(ok);
            let mark = if ok { "" } else { "✗ " };
            lines.push(format!("{mark}{tool}: called {n} times (at least {least})"));
        }
        Scored {
            score: kept as f64 / minimums.len() as f64,
            lines,
        }
    }

    fn subset(&self, calls: &[&ToolCall]) -> Scored {
        if calls.is_empty() {
            return Scored {
                score: 1.0,
                lines: vec!["no tool calls (trivially among the allowed)".into()],
            };
        }
        let mut lines = Vec::new();
        let mut allowed = 0usize;
        for (i, call) in calls.iter().enumerate() {
            if self.expected.iter().any(|s| self.fits(s, call)) {
                allowed += 1;
                lines.push(format!("call #{}: {} is allowed", i + 1, shown(call)));
            } else {
                lines.push(format!(
                    "✗ call #{}: {} is not among the expected calls",
                    i + 1,
                    shown(call)
                ));
            }
        }
        Scored {
            score: allowed as f64 / calls.len() as f64,
            lines,
        }
    }

    /// The verdict for a share of credit: a number on a scale criterion, else MET only
    /// when the whole trajectory holds.
    fn verdict(&self, score: f64) -> Verdict {
        match &self.kind {
            Kind::Scale(s) => Verdict::Score(s.min + score * (s.max - s.min)),
            _ if score >= 1.0 => Verdict::Met,
            _ => Verdict::Unmet,
        }
    }
}

impl Check for Trajectory {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let calls = calls(input)?;
        let scored = match (self.mode, &self.minimums) {
            // agentv counts minimums over a trace; with no calls there is none, and it scores 0.
            (Mode::AnyOrder, Some(_)) if calls.is_empty() => Scored {
                score: 0.0,
                lines: vec!["✗ no tool calls to count".into()],
            },
            (Mode::AnyOrder, Some(m)) => Self::minimums(m, &calls),
            (Mode::AnyOrder, None) => self.any_order(&calls),
            (Mode::Exact, _) => self.exact(&calls),
            (Mode::InOrder, _) => self.in_order(&calls),
            (Mode::Subset, _) => self.subset(&calls),
        };
        let score = if self.negate {
            1.0 - scored.score
        } else {
            scored.score
        };
        let mut evidence = vec![format!(
            "trajectory {:.0}% ({} {}){}",
            score * 100.0,
            super::plural(calls.len(), "call"),
            match self.mode {
                Mode::Exact => "exact",
                Mode::InOrder => "in order",
                Mode::AnyOrder => "any order",
                Mode::Subset => "subset",
            },
            if self.negate { ", negated" } else { "" }
        )];
        // The failures first, after the summary: they are what a reader looks for.
        let (bad, good): (Vec<String>, Vec<String>) =
            scored.lines.into_iter().partition(|l| l.starts_with('✗'));
        evidence.extend(bad);
        evidence.extend(good);
        Ok(CheckOutput {
            verdict: self.verdict(score),
            measure: Some(score),
            evidence,
        })
    }
}
