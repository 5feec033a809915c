use std::fs::OpenOptions;
use std::io::Write;

use super::super::tests::{manifest, result};
use super::*;
use crate::model::CriterionResult;
use crate::store::runs::RunWriter;

fn tagged(id: &str, tag: usize) -> CriterionResult {
    let mut r = result(id);
    r.reason = format!("line {tag}");
    r
}

/// `read_cells`, grouped by item: what the stream must yield.
fn grouped(run: &RunDir, m: &Manifest) -> (Vec<ItemCells>, u64) {
    let (cells, valid) = run.read_cells(m).unwrap();
    let mut out: Vec<ItemCells> = Vec::new();
    for ((item, _), cell) in cells {
        match out.last_mut() {
            Some(g) if g.item == item => g.cells.push(cell),
            _ => out.push(ItemCells {
                item,
                cells: vec![cell],
            }),
        }
    }
    (out, valid)
}

fn streamed(run: &RunDir, m: &Manifest, cursors: usize) -> (Vec<ItemCells>, u64) {
    let mut stream = run.stream_cells_with(m, cursors).unwrap();
    let items = stream.by_ref().map(Result::unwrap).collect();
    (items, stream.valid_len())
}

fn journal(dir: &Path) -> (RunDir, Manifest, RunWriter) {
    let run = RunDir::new(dir, "r1");
    let m = manifest("r1", "abc");
    run.write_manifest(&m).unwrap();
    let w = RunWriter::create(&run, &m).unwrap();
    (run, m, w)
}

/// (item, criterion, reason) of every streamed cell, in order.
fn flat(items: &[ItemCells]) -> Vec<(usize, String, String)> {
    items
        .iter()
        .flat_map(|g| {
            g.cells.iter().map(move |c| {
                assert_eq!(c.item, g.item);
                (
                    c.item,
                    c.result.criterion_id.clone(),
                    c.result.reason.clone(),
                )
            })
        })
        .collect()
}

fn cell(item: usize, c: &str, reason: &str) -> (usize, String, String) {
    (item, c.to_owned(), reason.to_owned())
}

#[test]
fn an_in_order_journal_streams_as_it_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let (run, m, mut w) = journal(dir.path());
    for item in 0..50 {
        w.append(
            item,
            &format!("i{item}"),
            &[tagged("b", item), tagged("a", item)],
        )
        .unwrap();
    }
    w.finish().unwrap();
    let (got, valid) = streamed(&run, &m, MAX_CURSORS);
    assert_eq!((got.clone(), valid), grouped(&run, &m));
    assert_eq!(got.len(), 50);
    assert_eq!(
        flat(&got[3..4]),
        [cell(3, "a", "line 3"), cell(3, "b", "line 3")],
        "criteria in id order"
    );
    assert_eq!(got[3].cells[0].item_id, "i3");
}

#[test]
fn a_resumed_journal_merges_late_lines_into_their_items() {
    let dir = tempfile::tempdir().unwrap();
    let (run, m, mut w) = journal(dir.path());
    // Killed while items 2 and 3 were partly journalled; item 1 never was (an item
    // only among the late lines).
    w.append(0, "i0", &[tagged("a", 0), tagged("b", 0)])
        .unwrap();
    w.append(2, "i2", &[tagged("a", 1)]).unwrap();
    w.append(3, "i3", &[tagged("b", 2)]).unwrap();
    // The resume grades what is missing, in input order.
    w.append(1, "i1", &[tagged("a", 3), tagged("b", 3)])
        .unwrap();
    w.append(2, "i2", &[tagged("b", 4)]).unwrap();
    w.append(3, "i3", &[tagged("a", 5)]).unwrap();
    w.append(4, "i4", &[tagged("a", 6), tagged("b", 6)])
        .unwrap();
    w.finish().unwrap();
    for cursors in [1, 2, MAX_CURSORS] {
        let (got, valid) = streamed(&run, &m, cursors);
        assert_eq!((got.clone(), valid), grouped(&run, &m), "{cursors} cursors");
        assert_eq!(
            flat(&got),
            [
                cell(0, "a", "line 0"),
                cell(0, "b", "line 0"),
                cell(1, "a", "line 3"),
                cell(1, "b", "line 3"),
                cell(2, "a", "line 1"),
                cell(2, "b", "line 4"),
                cell(3, "a", "line 5"),
                cell(3, "b", "line 2"),
                cell(4, "a", "line 6"),
                cell(4, "b", "line 6"),
            ]
        );
    }
}

#[test]
fn a_retried_cell_takes_the_later_line() {
    let dir = tempfile::tempdir().unwrap();
    let (run, m, mut w) = journal(dir.path());
    for item in 0..5 {
        w.append(item, "x", &[tagged("a", 0), tagged("b", 0)])
            .unwrap();
    }
    // Retry of chosen cells, then a second retry of one of them.
    w.append(1, "x", &[tagged("b", 1)]).unwrap();
    w.append(3, "x", &[tagged("a", 1)]).unwrap();
    w.append(3, "x", &[tagged("a", 2)]).unwrap();
    w.append(3, "x", &[tagged("a", 3)]).unwrap();
    w.append(0, "x", &[tagged("a", 4)]).unwrap();
    w.finish().unwrap();
    for cursors in [1, MAX_CURSORS] {
        let (got, _) = streamed(&run, &m, cursors);
        assert_eq!(got, grouped(&run, &m).0);
        let reasons: Vec<_> = flat(&got).into_iter().map(|(_, _, r)| r).collect();
        assert_eq!(
            reasons,
            [
                "line 4", "line 0", "line 0", "line 1", "line 0", "line 0", "line 3", "line 0",
                "line 0", "line 0"
            ]
        );
    }
}

#[test]
fn copied_cells_then_graded_ones_come_together() {
    let dir = tempfile::tempdir().unwrap();
    let (run, m, mut w) = journal(dir.path());
    for item in 0..1000 {
        w.append(item, "x", &[tagged("keep", 0)]).unwrap();
    }
    for item in 0..1000 {
        w.append(item, "x", &[tagged("new", 1), tagged("a", 1)])
            .unwrap();
    }
    w.finish().unwrap();
    let mut stream = run.stream_cells(&m).unwrap();
    assert_eq!(stream.cursors.len(), 2, "one cursor per pass");
    assert!(stream.loaded.is_empty(), "nothing held in memory");
    let first = stream.next().unwrap().unwrap();
    assert_eq!(
        flat(std::slice::from_ref(&first)),
        [
            cell(0, "a", "line 1"),
            cell(0, "keep", "line 0"),
            cell(0, "new", "line 1")
        ]
    );
    assert_eq!(streamed(&run, &m, MAX_CURSORS), grouped(&run, &m));
}

#[test]
fn a_torn_tail_is_left_out_of_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (run, m, mut w) = journal(dir.path());
    w.append(0, "a", &[tagged("c1", 0), tagged("c2", 0)])
        .unwrap();
    w.append(1, "b", &[tagged("c1", 0)]).unwrap();
    w.finish().unwrap();
    let whole = std::fs::metadata(run.results_path()).unwrap().len();
    let mut f = OpenOptions::new()
        .append(true)
        .open(run.results_path())
        .unwrap();
    f.write_all(b"{\"item\": 0, \"item_id\": \"a\", \"res")
        .unwrap();
    drop(f);
    let (got, valid) = streamed(&run, &m, MAX_CURSORS);
    assert_eq!(valid, whole);
    assert_eq!((got.clone(), valid), grouped(&run, &m));
    assert_eq!(flat(&got).len(), 3);
    // A header torn by a crash: an empty journal.
    std::fs::write(run.results_path(), b"{\"run\": \"r1\"").unwrap();
    assert_eq!(streamed(&run, &m, MAX_CURSORS), (Vec::new(), 0));
    // No journal yet.
    std::fs::remove_file(run.results_path()).unwrap();
    assert_eq!(streamed(&run, &m, MAX_CURSORS), (Vec::new(), 0));
}

#[test]
fn the_stream_reports_damage_as_read_cells_does() {
    let dir = tempfile::tempdir().unwrap();
    let (run, m, mut w) = journal(dir.path());
    w.append(0, "a", &[result("c1")]).unwrap();
    w.append(1, "b", &[result("c1")]).unwrap();
    w.finish().unwrap();
    let message = |m: &Manifest| {
        let stream = run
            .stream_cells(m)
            .and_then(Iterator::collect::<Result<Vec<_>, _>>);
        let e = stream.unwrap_err().to_string();
        assert_eq!(e, run.read_cells(m).unwrap_err().to_string());
        e
    };
    let e = message(&manifest("r1", "def"));
    assert!(
        e.contains(":1: these results belong to run r1 with rubric hash abc…"),
        "{e}"
    );
    let good = std::fs::read(run.results_path()).unwrap();
    for (bad, expect) in [
        (&b"garbage\n"[..], ":4: not a result line"),
        (b"{}\n", ":4: not a result line"),
        // Right item, not a result: found when the stream reaches it.
        (b"{\"item\": 0}\n", ":4: not a result line"),
    ] {
        let mut text = good.clone();
        text.extend_from_slice(bad);
        text.extend_from_slice(&good[good.iter().position(|b| *b == b'\n').unwrap() + 1..]);
        std::fs::write(run.results_path(), &text).unwrap();
        let e = message(&m);
        assert!(e.contains(expect), "{e}");
    }
}

#[test]
fn the_stream_equals_read_cells_on_random_journals() {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt as _, SeedableRng as _};
    for seed in 0..150 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let dir = tempfile::tempdir().unwrap();
        let (run, m, mut w) = journal(dir.path());
        let items = rng.random_range(0..40);
        let mut tag = 0;
        // Passes of the run engine (in item order), now and then a line out of order.
        for _ in 0..rng.random_range(0..5) {
            for item in 0..items {
                if rng.random_range(0..3) == 0 {
                    continue;
                }
                let n = rng.random_range(1..4);
                let cells: Vec<_> = (0..n)
                    .map(|_| {
                        tag += 1;
                        tagged(&format!("c{}", rng.random_range(0..4)), tag)
                    })
                    .collect();
                let at = if rng.random_range(0..15) == 0 {
                    rng.random_range(0..items)
                } else {
                    item
                };
                w.append(at, &format!("i{at}"), &cells).unwrap();
            }
        }
        w.finish().unwrap();
        if rng.random_range(0..3) == 0 {
            let mut f = OpenOptions::new()
                .append(true)
                .open(run.results_path())
                .unwrap();
            f.write_all(b"{\"item\": 3, \"ite").unwrap();
        }
        let expected = grouped(&run, &m);
        for cursors in [1, 2, 3, MAX_CURSORS] {
            let got = streamed(&run, &m, cursors);
            assert_eq!(got, expected, "seed {seed}, {cursors} cursors");
        }
        assert!(
            expected.0.windows(2).all(|w| w[0].item < w[1].item),
            "in item order"
        );
    }
}
