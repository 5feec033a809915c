//! The calls a panel would make for an item, without making them: what `--dry-run`
//! counts and prices. Repair requests are not foreseeable and are not counted.

use std::sync::Arc;

use super::{Judge, Panel, Strategy, holistic, one_shot, per_criterion};
use crate::llm::ChatRequest;
use crate::model::{Criterion, Item, Method, Rubric, Scope};

impl Panel {
    /// The first request of every call for `judged` criteria of `item` (all criteria of the
    /// rubric under the holistic strategy), with the judge that would send it; and why each
    /// call that cannot be made (a template that does not render) cannot.
    /// A `scope: turn` criterion is asked once per assistant turn, alone, as the executor
    /// asks it (an item without a conversation makes no call for it).
    pub fn plan(
        &self,
        rubric: &Rubric,
        judged: &[&Criterion],
        item: &Item,
    ) -> (Vec<(Arc<Judge>, ChatRequest)>, Vec<String>) {
        let per_turn = self.strategy != Strategy::Holistic;
        let (turned, whole): (Vec<&Criterion>, Vec<&Criterion>) = judged
            .iter()
            .partition(|c| per_turn && matches!(c.scope, Scope::Turn(_)));
        let (mut out, mut cannot) = self.plan_calls(rubric, &whole, item);
        let turns = item
            .conversation
            .as_deref()
            .map_or(0, crate::model::Conversation::turns);
        for turn in (0..turns).filter_map(|k| item.at_turn(k)) {
            for &c in &turned {
                let (calls, problems) = self.plan_calls(rubric, &[c], &turn);
                out.extend(calls);
                cannot.extend(problems);
            }
        }
        (out, cannot)
    }

    fn plan_calls(
        &self,
        rubric: &Rubric,
        judged: &[&Criterion],
        item: &Item,
    ) -> (Vec<(Arc<Judge>, ChatRequest)>, Vec<String>) {
        let mut out = Vec::new();
        let mut cannot = Vec::new();
        if self.strategy == Strategy::Holistic {
            for judge in &self.judges {
                for s in 0..self.samples() {
                    out.push((
                        Arc::clone(judge),
                        holistic::first_request(judge, rubric, item, s),
                    ));
                }
            }
            return (out, cannot);
        }
        let mut groups: Vec<(Vec<Arc<Judge>>, Vec<&Criterion>)> = Vec::new();
        for &c in judged {
            let voters = match self.voters(c) {
                Ok(v) => v,
                Err(f) => {
                    cannot.push(format!("{}: {}", c.id, f.message));
                    continue;
                }
            };
            let own_template = matches!(&c.method, Method::Judge(j) if j.judged_alone());
            if self.strategy == Strategy::PerCriterion || own_template {
                for judge in &voters {
                    for s in 0..self.samples() {
                        match per_criterion::first_request(judge, rubric, c, item, s) {
                            Ok((request, _)) => out.push((Arc::clone(judge), request)),
                            Err(f) => cannot.push(format!("{}: {}", c.id, f.message)),
                        }
                    }
                }
                continue;
            }
            let same = |v: &Vec<Arc<Judge>>| {
                v.iter()
                    .map(|j| &j.client.id)
                    .eq(voters.iter().map(|j| &j.client.id))
            };
            match groups.iter_mut().find(|(v, _)| same(v)) {
                Some((_, members)) => members.push(c),
                None => groups.push((voters, vec![c])),
            }
        }
        let passes: &[bool] = if self.strategy == Strategy::DoublePass {
            &[false, true]
        } else {
            &[false]
        };
        for (voters, members) in &groups {
            for judge in voters {
                for s in 0..self.samples() {
                    for &reversed in passes {
                        let plan = one_shot::Plan::new(judge, rubric, members, item, s, reversed);
                        out.push((Arc::clone(judge), plan.request));
                    }
                }
            }
        }
        (out, cannot)
    }
}
