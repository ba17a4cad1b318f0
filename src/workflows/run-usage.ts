/**
 * Token usage and cost of a run: added up turn by turn from what the model activity reports, checked
 * against the run's `maxInputTokens` / `maxOutputTokens` / `maxCost` limits. Pure and deterministic.
 */
import type { ModelSettings, ModelTurn } from '../contract/model-types';
import type {
  AgentRunLimits,
  CostTable,
  RunUsage,
  RunUsageTotals,
  TokenPrices,
  TurnUsage,
} from '../contract/agent-run-types';

/** Most per-turn entries kept in the run state (the oldest are dropped; totals keep counting). */
export const RUN_USAGE_MAX_TURNS_KEPT = 50;

/** A fresh usage record, continuing the totals of earlier generations. */
export function initialRunUsage(carried?: RunUsageTotals): RunUsage {
  return {
    inputTokens: carried?.inputTokens ?? 0,
    outputTokens: carried?.outputTokens ?? 0,
    ...(carried?.cost !== undefined ? { cost: carried.cost } : {}),
    unreportedTurns: carried?.unreportedTurns ?? 0,
    unpricedTurns: carried?.unpricedTurns ?? 0,
    turns: [],
  };
}

/** The totals a continue-as-new carries. */
export function usageTotals(usage: RunUsage): RunUsageTotals {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    ...(usage.cost !== undefined ? { cost: usage.cost } : {}),
    unreportedTurns: usage.unreportedTurns,
    unpricedTurns: usage.unpricedTurns,
  };
}

/** Adds one model turn's usage (and its cost, when the run has a cost table) to the run's usage. */
export function addTurnUsage(
  usage: RunUsage,
  turnNumber: number,
  turn: ModelTurn,
  settings: ModelSettings,
  costTable: CostTable | undefined,
): TurnUsage {
  const reported = turn.usage;
  const entry: TurnUsage = {
    turn: turnNumber,
    inputTokens: reported?.inputTokens ?? 0,
    outputTokens: reported?.outputTokens ?? 0,
    ...(reported?.cachedInputTokens !== undefined ? { cachedInputTokens: reported.cachedInputTokens } : {}),
    ...(reported?.reasoningTokens !== undefined ? { reasoningTokens: reported.reasoningTokens } : {}),
    ...(turn.modelId !== undefined ? { modelId: turn.modelId } : {}),
    ...(turn.issue !== undefined ? { issue: turn.issue.code } : {}),
  };
  if (reported?.inputTokens === undefined && reported?.outputTokens === undefined) usage.unreportedTurns += 1;
  usage.inputTokens += entry.inputTokens;
  usage.outputTokens += entry.outputTokens;
  if (costTable) {
    const prices = pricesFor(costTable, turn.modelId, typeof settings.model === 'string' ? settings.model : undefined);
    if (prices) {
      entry.cost = turnCost(entry, prices);
      usage.cost = (usage.cost ?? 0) + entry.cost;
    } else {
      usage.unpricedTurns += 1;
    }
  }
  usage.turns.push(entry);
  if (usage.turns.length > RUN_USAGE_MAX_TURNS_KEPT)
    usage.turns.splice(0, usage.turns.length - RUN_USAGE_MAX_TURNS_KEPT);
  return entry;
}

/**
 * The prices of a model: its exact id, then the run's `model` setting, then the longest table key the id
 * starts with (`gpt-4.1-mini` prices `gpt-4.1-mini-2025-04-14`), then `'*'`.
 */
export function pricesFor(
  table: CostTable,
  modelId: string | undefined,
  settingsModel: string | undefined,
): TokenPrices | undefined {
  for (const id of [modelId, settingsModel]) {
    if (id !== undefined && Object.prototype.hasOwnProperty.call(table, id)) return table[id];
  }
  if (modelId !== undefined) {
    const prefix = Object.keys(table)
      .filter((key) => key !== '*' && modelId.startsWith(key))
      .sort((a, b) => b.length - a.length)[0];
    if (prefix !== undefined) return table[prefix];
  }
  return Object.prototype.hasOwnProperty.call(table, '*') ? table['*'] : undefined;
}

/** Cost of one turn in the table's currency; cached input at its own price when the table has one. */
export function turnCost(entry: TurnUsage, prices: TokenPrices): number {
  const cached = Math.min(entry.cachedInputTokens ?? 0, entry.inputTokens);
  const cachedPrice = prices.cachedInputPerMillionTokens ?? prices.inputPerMillionTokens;
  return (
    ((entry.inputTokens - cached) * prices.inputPerMillionTokens +
      cached * cachedPrice +
      entry.outputTokens * prices.outputPerMillionTokens) /
    1_000_000
  );
}

/** Why the run must stop because of its token or cost limits, or `undefined` while it is within them. */
export function usageLimitReason(usage: RunUsage, limits: AgentRunLimits | undefined): string | undefined {
  if (!limits) return undefined;
  if (limits.maxInputTokens !== undefined && usage.inputTokens >= limits.maxInputTokens) {
    return `The run reached its limit of ${limits.maxInputTokens} input tokens (used ${usage.inputTokens}).`;
  }
  if (limits.maxOutputTokens !== undefined && usage.outputTokens >= limits.maxOutputTokens) {
    return `The run reached its limit of ${limits.maxOutputTokens} output tokens (used ${usage.outputTokens}).`;
  }
  if (limits.maxCost !== undefined) {
    if (usage.unpricedTurns > 0) {
      return `The run has a cost limit of ${limits.maxCost}, but the cost table has no price for the model that answered; the limit cannot be enforced.`;
    }
    if ((usage.cost ?? 0) >= limits.maxCost) {
      return `The run reached its cost limit of ${limits.maxCost} (spent ${roundCost(usage.cost ?? 0)}).`;
    }
  }
  return undefined;
}

/** A warning for the run state when token limits are set but the provider reports no usage. */
export function unreportedUsageWarning(usage: RunUsage, limits: AgentRunLimits | undefined): string | undefined {
  if (usage.unreportedTurns === 0 || !limits) return undefined;
  if (limits.maxInputTokens === undefined && limits.maxOutputTokens === undefined && limits.maxCost === undefined) {
    return undefined;
  }
  return 'The model provider reports no token usage: the token and cost limits of this run count only the turns it reported.';
}

function roundCost(cost: number): number {
  return Math.round(cost * 1e6) / 1e6;
}

/** One line for the model activity's summary in the UI: turn, model and the tokens used so far. */
export function modelTurnSummary(turn: number, settings: ModelSettings, usage: RunUsage, maxLength: number): string {
  const model = typeof settings.model === 'string' ? `${settings.provider}:${settings.model}` : settings.provider;
  const cost = usage.cost !== undefined ? `, cost ${roundCost(usage.cost)}` : '';
  const text = `model turn ${turn} (${model}); so far ${usage.inputTokens} in / ${usage.outputTokens} out tokens${cost}`;
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}
