/**
 * The words of a model call the agent's hour has no room for (docs/configuration.md
 * `model_calls_per_hour`): a review's skip reason and an augmentation's reason share them.
 */

/** `model_budget: …` with when the next call could be made. */
export function modelBudgetReason(perHour: number, nextInMs: number): string {
  const when = Number.isFinite(nextInMs)
    ? `the next one in ${Math.max(1, Math.ceil(nextInMs / 60_000))} min`
    : 'none are allowed (model_calls_per_hour is 0)';
  return `model_budget: the agent's ${perHour.toLocaleString('en-US')} model calls an hour are used up; ${when}`;
}
