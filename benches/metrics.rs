//! Judge-versus-human metrics with bootstrap intervals.
//!
//! Generates 100,000 labelled cells deterministically (20,000 items × 5 binary criteria, about
//! 2 % `CANNOT_ASSESS`, a judge that agrees with the human about 85 % of the time), then computes
//! every binary metric per criterion and pooled with 1,000 seeded bootstrap resamples over
//! items, and prints the wall and CPU time against the 2 s floor.
//!
//! Run: `cargo bench --bench metrics` (release build). `BENCH_ITEMS=N` changes the item count,
//! `BENCH_RESAMPLES=N` the resamples.

// A benchmark stops at the first surprise; there is no user input here.
#![allow(clippy::expect_used)]

use std::time::Instant;

use rubricate::metrics::{Bootstrap, CriterionLabels, LabelPair, LabelScale, criterion_report};
use rubricate::model::Verdict;

const CRITERIA: usize = 5;
const FLOOR_S: f64 = 2.0;

/// `SplitMix64`: a tiny deterministic generator for the synthetic labels.
struct SplitMix(u64);

impl SplitMix {
    fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1_u64 << 53) as f64
    }
}

/// Human and judge verdicts, criterion-major: `[criterion][item]`.
fn generate(items: usize) -> (Vec<Vec<Verdict>>, Vec<Vec<Verdict>>) {
    let mut rng = SplitMix(0x5EED);
    let mut human: Vec<Vec<Verdict>> = (0..CRITERIA).map(|_| Vec::with_capacity(items)).collect();
    let mut judge: Vec<Vec<Verdict>> = (0..CRITERIA).map(|_| Vec::with_capacity(items)).collect();
    for c in 0..CRITERIA {
        let met_rate = 0.3 + 0.1 * c as f64;
        for _ in 0..items {
            let h = if rng.next_unit() < 0.02 {
                Verdict::CannotAssess
            } else if rng.next_unit() < met_rate {
                Verdict::Met
            } else {
                Verdict::Unmet
            };
            let j = match (&h, rng.next_unit()) {
                (_, r) if r < 0.01 => Verdict::CannotAssess,
                (h, r) if r < 0.86 => h.clone(),
                (Verdict::Met, _) => Verdict::Unmet,
                _ => Verdict::Met,
            };
            human[c].push(h);
            judge[c].push(j);
        }
    }
    (human, judge)
}

/// CPU seconds (user + system) this process has used, from /proc (Linux).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit(')').next()?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let items = env_usize("BENCH_ITEMS", 20_000);
    let resamples = env_usize("BENCH_RESAMPLES", 1_000);
    let ids: Vec<String> = (0..items).map(|i| format!("item-{i}")).collect();
    let (human, judge) = generate(items);
    let names: Vec<String> = (0..CRITERIA).map(|c| format!("criterion-{c}")).collect();
    let labels: Vec<CriterionLabels<'_>> = (0..CRITERIA)
        .map(|c| CriterionLabels {
            criterion: &names[c],
            scale: LabelScale::Binary,
            pairs: (0..items)
                .map(|i| LabelPair {
                    item: &ids[i],
                    human: &human[c][i],
                    judge: &judge[c][i],
                })
                .collect(),
        })
        .collect();
    let options = Bootstrap {
        resamples,
        seed: 2024,
        level: 0.95,
    };

    println!(
        "rubricate metrics benchmark: {items} items × {CRITERIA} binary criteria = {} cells; \
         8 metrics per criterion and pooled; {resamples} bootstrap resamples",
        items * CRITERIA
    );
    println!(
        "{:>22} {:>9} {:>9} {:>14}",
        "run", "wall s", "cpu s", "floor / wall"
    );
    let time = |bootstrap: Option<&Bootstrap>| {
        let cpu0 = cpu_seconds().unwrap_or(0.0);
        let start = Instant::now();
        let report = criterion_report(&labels, bootstrap);
        let wall = start.elapsed().as_secs_f64();
        (report, wall, cpu_seconds().unwrap_or(0.0) - cpu0)
    };
    let (_, wall, cpu) = time(None);
    println!(
        "{:>22} {wall:>9.3} {cpu:>9.2} {:>13.1}×",
        "no bootstrap",
        FLOOR_S / wall
    );
    let mut walls = Vec::new();
    let mut last = None;
    for run in 1..=3 {
        let (report, wall, cpu) = time(Some(&options));
        println!(
            "{:>22} {wall:>9.3} {cpu:>9.2} {:>13.1}×",
            format!("bootstrap, run {run}"),
            FLOOR_S / wall
        );
        walls.push(wall);
        last = Some(report);
    }
    walls.sort_by(f64::total_cmp);
    let median = walls[walls.len() / 2];
    println!(
        "median {median:.3} s with bootstrap: {:.1}× under the {FLOOR_S} s floor (tests never assert timings)",
        FLOOR_S / median
    );

    let report = last.expect("ran");
    let pooled = report.pooled.expect("binary criteria pool");
    let ci = pooled.ci.expect("intervals");
    let show =
        |name: &str, value: Option<f64>, ci: Option<rubricate::metrics::Ci>| match (value, ci) {
            (Some(v), Some(ci)) => {
                println!("  pooled {name:<9} {v:.4}  [{:.4}, {:.4}]", ci.low, ci.high);
            }
            (v, _) => println!("  pooled {name:<9} {v:?}"),
        };
    println!(
        "pooled: support {}, abstained {}",
        pooled.metrics.support, pooled.abstained
    );
    show("accuracy", pooled.metrics.accuracy, ci.accuracy);
    show("f1", pooled.metrics.f1, ci.f1);
    show("macro_f1", pooled.metrics.macro_f1, ci.macro_f1);
    show("kappa", pooled.metrics.kappa, ci.kappa);
    show("phi", pooled.metrics.phi, ci.phi);
    show("leniency", pooled.metrics.leniency, ci.leniency);
    println!(
        "floor: all binary metrics of 100,000 cells, per criterion and pooled, with 1,000 resamples in < 2 s on 2 cores"
    );
}
