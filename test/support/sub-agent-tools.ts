import { z } from 'zod';
import { defineAgentTool, defineHandoff } from '../../src/tools/define-agent-tool';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import type { ScriptedTurn } from '../../src/model/scripted-model';

/**
 * The tools of the sub-agent tests, with effects counted at the test ledger (test/support/ledger-server.ts,
 * which does not deduplicate):
 * - `book_flight` (compensable, undone by `cancel_flight`) and `book_hotel` (compensable, undone by
 *   `cancel_hotel`, approval `always`): each records `book` under the call's key; the undo records `cancel`
 *   under the forward call's key. Both reconcile by asking the ledger, so a call whose worker died after the
 *   effect is never repeated;
 * - `flight_agent` and `hotel_agent`: agent tools whose children book a flight or a hotel (scripted), then
 *   answer;
 * - `trip_agent`: its child books a flight, then a hotel (which waits for approval);
 * - `planner_agent`: its child calls `hotel_agent` (agents nest);
 * - `echo_agent`: its goal is the text it is given (a child that only answers);
 * - `broken_agent`: its child books a flight, then calls a tool it does not have; every tool is critical to it,
 *   so it aborts and compensates its booking;
 * - `billing_handoff`: a handoff to an agent that answers from the conversation it was given.
 */
export function subAgentTools(ledgerUrl: string): Tool[] {
  return [
    ...bookingTools(ledgerUrl),
    flightAgent,
    hotelAgent,
    tripAgent,
    plannerAgent,
    brokenAgent,
    echoAgent,
    billingHandoff,
  ];
}

/** The child script of an agent that calls `tool` once with `args`, then answers `answer`. */
export function oneCallScript(tool: string, args: Record<string, unknown>, answer: string): ScriptedTurn[] {
  return [{ toolCalls: [{ name: tool, arguments: args }] }, { text: answer, final: true }];
}

const flightAgent = defineAgentTool({
  name: 'flight_agent',
  description: 'Books a flight to a city. Use for flights only.',
  input: z.object({ to: z.string() }),
  goal: ({ to }) => `Book a flight to ${to}.`,
  tools: ['book_flight'],
  model: ({ to }) => ({
    provider: 'scripted',
    script: oneCallScript('book_flight', { to }, `Flight to ${to} booked.`),
  }),
  limits: { maxSteps: 5 },
});

const hotelAgent = defineAgentTool({
  name: 'hotel_agent',
  description: 'Books a hotel in a city. Use for hotels only.',
  input: z.object({ city: z.string() }),
  goal: ({ city }) => `Book a hotel in ${city}.`,
  tools: ['book_hotel'],
  model: ({ city }) => ({
    provider: 'scripted',
    script: oneCallScript('book_hotel', { city }, `Hotel in ${city} booked.`),
  }),
});

const tripAgent = defineAgentTool({
  name: 'trip_agent',
  description: 'Books a flight and a hotel.',
  input: z.object({ city: z.string() }),
  goal: ({ city }) => `Book a flight to ${city} and a hotel there.`,
  tools: ['book_flight', 'book_hotel'],
  model: ({ city }) => ({
    provider: 'scripted',
    script: [
      { toolCalls: [{ name: 'book_flight', arguments: { to: city } }] },
      { toolCalls: [{ name: 'book_hotel', arguments: { city } }] },
      { text: `Trip to ${city} booked.`, final: true },
    ],
  }),
});

const plannerAgent = defineAgentTool({
  name: 'planner_agent',
  description: 'Plans a stay by asking the hotel agent.',
  input: z.object({ city: z.string() }),
  goal: ({ city }) => `Plan a stay in ${city}.`,
  tools: ['hotel_agent'],
  model: ({ city }) => ({
    provider: 'scripted',
    script: oneCallScript('hotel_agent', { city }, `Stay in ${city} planned.`),
  }),
});

const echoAgent = defineAgentTool({
  name: 'echo_agent',
  description: 'Answers with the text it is given.',
  input: z.object({ text: z.string() }),
  goal: ({ text }) => text,
  tools: [],
  model: { provider: 'scripted', script: [{ text: 'Echoed.', final: true }] },
});

const brokenAgent = defineAgentTool({
  name: 'broken_agent',
  description: 'Books a flight, then fails.',
  input: z.object({ to: z.string() }),
  goal: ({ to }) => `Book a flight to ${to}, then do the impossible.`,
  tools: ['book_flight'],
  failurePolicy: { criticalTools: '*' },
  model: ({ to }) => ({
    provider: 'scripted',
    script: [
      { toolCalls: [{ name: 'book_flight', arguments: { to } }] },
      { toolCalls: [{ name: 'no_such_tool', arguments: {} }] },
      { text: 'Never reached.', final: true },
    ],
  }),
});

const billingHandoff = defineHandoff({
  name: 'billing_handoff',
  description: 'Transfers the customer to the billing agent. Use for invoices only.',
  input: z.object({ summary: z.string() }),
  goal: ({ summary }) => `You are the billing agent. The triage agent says: ${summary}`,
  tools: [],
  model: { provider: 'scripted', script: [{ text: 'Billing: your invoice INV-7 is paid.', final: true }] },
});

function bookingTools(ledgerUrl: string): Tool[] {
  const write = async (key: string, kind: string): Promise<string> => {
    const response = await fetch(`${ledgerUrl}/effects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key, kind, amount: 1 }),
    });
    if (response.status !== 201) throw new Error(`ledger answered ${response.status}`);
    return ((await response.json()) as { effectId: string }).effectId;
  };
  const found = async (key: string, kind: string): Promise<string | undefined> => {
    const response = await fetch(`${ledgerUrl}/effects?key=${encodeURIComponent(key)}&kind=${kind}`, {
      headers: { 'x-ledger-purpose': 'reconcile' },
    });
    const { effects } = (await response.json()) as { effects: Array<{ effectId: string }> };
    return effects[0]?.effectId;
  };
  const booking = (name: string, undo: string, approval: 'always' | 'never') =>
    defineTool({
      name,
      description: `Books (${name}).`,
      input: z.object({ to: z.string().optional(), city: z.string().optional() }),
      output: z.object({ bookingId: z.string() }),
      effect: 'compensable',
      undo,
      idempotent: false,
      approval,
      // Short attempts: after a worker dies the call is retried soon (the lease is shorter still).
      timeout: '5s',
    }).implement(async (_input, ctx) => ({ bookingId: await write(ctx.idempotencyKey, 'book') }), {
      reconcile: async (key) => {
        const effectId = await found(key, 'book');
        return effectId ? { done: true, output: { bookingId: effectId } } : { done: false };
      },
    });
  const cancel = (name: string) =>
    defineTool({
      name,
      description: `Cancels a booking (${name}).`,
      input: z.object({ originalInput: z.unknown(), originalOutput: z.unknown().optional(), originalKey: z.string() }),
      output: z.object({ cancelled: z.string() }),
      effect: 'irreversible',
      idempotent: false,
      approval: 'never',
    }).implement(async (input) => ({ cancelled: await write(input.originalKey, 'cancel') }));
  return [
    booking('book_flight', 'cancel_flight', 'never'),
    cancel('cancel_flight'),
    booking('book_hotel', 'cancel_hotel', 'always'),
    cancel('cancel_hotel'),
  ];
}
