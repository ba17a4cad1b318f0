import type { RunUsage, TurnUsage } from '../../src/contract/agent-run-types';

/**
 * A run's usage made of `turns`, the totals added up (a cost when any turn has one); `unreportedTurns` of them
 * are counted as turns whose provider reported no token counts.
 */
export function usageOfTurns(turns: TurnUsage[], unreportedTurns = 0): RunUsage {
  const costs = turns.flatMap((turn) => (turn.cost === undefined ? [] : [turn.cost]));
  return {
    inputTokens: turns.reduce((sum, turn) => sum + turn.inputTokens, 0),
    outputTokens: turns.reduce((sum, turn) => sum + turn.outputTokens, 0),
    ...(costs.length > 0 ? { cost: costs.reduce((sum, cost) => sum + cost, 0) } : {}),
    unreportedTurns,
    unpricedTurns: 0,
    turns,
  };
}
