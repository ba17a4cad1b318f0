import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import type { ScriptedTurn } from '../../src/model/scripted-model';

/** The typed answer of the {@link plannerAgent}: a city and a number of nights. */
export const tripPlan = z.object({ city: z.string().min(1), nights: z.number().int().positive() });

/**
 * A scripted planner whose model first answers in prose (a wrong shape for its `output`), then with the right JSON:
 * the same turns whether it runs on its own, as a sub-agent or as an MCP tool (each run's turns start at 0).
 */
export const PLANNER_SCRIPT: ScriptedTurn[] = [
  { text: 'Berlin, for two nights.', final: true },
  { text: '{"city":"Berlin","nights":2}', final: true },
];

/** An agent with instructions and a typed answer ({@link tripPlan}), played by {@link PLANNER_SCRIPT}. */
export const plannerAgent = defineAgent({
  name: 'trip_planner',
  description: 'Plans a trip: answers with the city and the number of nights.',
  instructions: 'You plan trips. Answer with the city and the number of nights.',
  model: { provider: 'scripted', script: PLANNER_SCRIPT },
  tools: [],
  output: tripPlan,
});
