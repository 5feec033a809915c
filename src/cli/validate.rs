//! `rubricate validate`: load and compile rubrics, read datasets through, and report every
//! problem located.

use std::path::Path;

use super::{CliError, exit, style};
use crate::engine::compile;
use crate::formats::dataset::{ReadOptions, is_dataset_file, open_dataset};
use crate::formats::import::split_pick;
use crate::formats::{Diagnostics, Format, import_file, is_bare_name};

/// At most this many problems are listed per dataset.
const MAX_DATASET_PROBLEMS: usize = 50;

pub(crate) fn run(files: &[String], from: Option<Format>) -> Result<u8, CliError> {
    let color = style::color_enabled(style::stdout_is_terminal());
    let mut failed = 0;
    for spec in files {
        let as_dataset = matches!(from, None | Some(Format::Autorubric));
        let outcome = if !is_bare_name(spec) && as_dataset && is_dataset_file(Path::new(spec)) {
            dataset(spec)
        } else {
            rubric(spec, from)
        };
        match outcome {
            Ok(what) => outln!("{} {spec} ({what})", style::green("ok", color)),
            Err(d) => {
                failed += 1;
                eprintln!("{d}");
            }
        }
    }
    if failed > 0 {
        return Err(CliError {
            code: exit::INPUT,
            message: format!("{failed} of {} files are not valid", files.len()),
        });
    }
    Ok(exit::OK)
}

fn rubric(spec: &str, from: Option<Format>) -> Result<String, Diagnostics> {
    let (path, pick) = split_pick(spec);
    if is_bare_name(spec) || pick.is_some() {
        let loaded = super::rubric_arg::load(spec, from, None)?;
        compile(&loaded)?;
        return Ok(describe(&loaded.rubric));
    }
    let imported = import_file(Path::new(path), from)?;
    let mut problems = Vec::new();
    for r in &imported.rubrics {
        if let Err(d) = compile(r) {
            problems.extend(d.0);
        }
    }
    for n in &imported.notes {
        eprintln!("note: {n}");
    }
    if !problems.is_empty() {
        return Err(Diagnostics(problems));
    }
    let what = match (imported.rubrics.as_slice(), imported.items.len()) {
        _ if !imported.expectations.is_empty() => {
            format!("{} expected grader scores", imported.expectations.len())
        }
        ([one], 0) => describe(&one.rubric),
        (rubrics, 0) => format!("{} rubrics", rubrics.len()),
        (rubrics, n) => format!("{n} cases, {} rubrics", rubrics.len()),
    };
    let mut conversations = crate::model::ConversationTally::default();
    for item in &imported.items {
        conversations.add(item.conversation.as_deref());
    }
    let what = match conversations.summary() {
        Some(c) => format!("{what}, {c}"),
        None => what,
    };
    Ok(format!("{}: {what}", imported.format))
}

fn describe(r: &crate::model::Rubric) -> String {
    format!(
        "rubric '{}' {}, {} criteria",
        r.id,
        r.version,
        r.criteria.len()
    )
}

fn dataset(spec: &str) -> Result<String, Diagnostics> {
    let ds = open_dataset(Path::new(spec), ReadOptions::default())?;
    let mut problems = Vec::new();
    let mut count = 0usize;
    let header_rubric = ds
        .header
        .rubric
        .as_ref()
        .map(|r| std::sync::Arc::clone(&r.rubric));
    // Items that bring their own rubric mean every item needs one (autorubric datasets):
    // an item with none, in a dataset with none, is named.
    let mut with_own = 0usize;
    let mut without = Vec::new();
    let mut shape = crate::model::pair::PairShape::default();
    let mut conversations = crate::model::ConversationTally::default();
    for item in ds.items {
        match item {
            Ok(mut item) => {
                count += 1;
                if let Err(m) = shape.add(&mut item) {
                    problems.push(crate::formats::Diagnostic::whole(&item.origin, m));
                }
                conversations.add(item.conversation.as_deref());
                if item.rubric.is_some() {
                    with_own += 1;
                } else if header_rubric.is_none() && without.len() < MAX_DATASET_PROBLEMS {
                    without.push(crate::formats::Diagnostic::whole(
                        &item.origin,
                        format!(
                            "item '{}' has no rubric and the dataset has none; give the item a `rubric` or the dataset one",
                            item.id
                        ),
                    ));
                }
                let rubric = item.rubric.clone().or_else(|| header_rubric.clone());
                if let (Some(gt), Some(r)) = (&item.ground_truth, rubric)
                    && let Err(m) = gt.resolve(&r)
                {
                    problems.push(crate::formats::Diagnostic::whole(
                        &item.origin,
                        format!("item '{}': {m}", item.id),
                    ));
                }
            }
            Err(d) => problems.push(d),
        }
        if problems.len() >= MAX_DATASET_PROBLEMS {
            break;
        }
    }
    if with_own > 0 {
        problems.extend(without);
    }
    if problems.is_empty() {
        let mut said = format!("dataset, {count} items");
        if let Some(pairs) = shape.describe() {
            said = format!("{said}: {pairs}");
        }
        if let Some(c) = conversations.summary() {
            said = format!("{said}, {c}");
        }
        Ok(said)
    } else {
        Err(Diagnostics(problems))
    }
}
