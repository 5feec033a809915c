//! `scope: turn` criteria: each assistant turn of a conversation scored (judged or
//! checked) with the conversation up to it, the turns combined by the criterion's rule
//! (`model::combine_turns`). Called by the executor, the one place criteria are scored.

use super::checks::CheckInput;
use super::compile::{CompiledMethod, CompiledRubric};
use super::executor::{ExecOptions, score_criterion};
use crate::model::{Combine, Criterion, CriterionResult, Failure, Item, combine_turns};

/// A `scope: turn` criterion: each assistant turn scored with the conversation up to it
/// (the turns' judge calls at once), then combined by `rule`.
pub(super) async fn score_turns(
    rubric: &CompiledRubric,
    (index, criterion): (usize, &Criterion),
    method: &CompiledMethod,
    rule: Combine,
    item: &Item,
    opts: &ExecOptions,
) -> CriterionResult {
    let Some(conversation) = item.conversation.as_deref() else {
        return CriterionResult::failed(
            &criterion.id,
            criterion.method.kind(),
            Failure::error(
                "scope",
                format!(
                    "criterion '{}' has `scope: turn` but item '{}' holds no conversation; give the item its `messages`, or remove `scope: turn`",
                    criterion.id, item.id
                ),
            ),
        );
    };
    let turns: Vec<Item> = (0..conversation.turns())
        .filter_map(|k| item.at_turn(k))
        .collect();
    let one = turns.iter().map(|turn| async move {
        match (method, &opts.judge) {
            (CompiledMethod::Judge, Some(panel)) => panel
                .judge_criteria(rubric.rubric(), &[(index, criterion)], turn, None)
                .await
                .into_iter()
                .next()
                .map_or_else(
                    || {
                        CriterionResult::failed(
                            &criterion.id,
                            criterion.method.kind(),
                            Failure::error("judge", "the judge returned no result for this turn"),
                        )
                    },
                    |(_, r)| r,
                ),
            _ => score_criterion(criterion, method, &CheckInput::new(turn), opts).await,
        }
    });
    let results = futures_util::future::join_all(one).await;
    combine_turns(criterion, rule, &results)
}
