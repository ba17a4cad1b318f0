/**
 * durable-tools: durable tool calls for AI agents on Temporal.
 *
 * The root entry is the three audience entries together — `durable-tools/client`, `durable-tools/worker` and
 * `durable-tools/testing` — and lists no name of its own: a public name is added to the one entry whose audience
 * needs it (or to `src/entries/common.ts` when both clients and workers do). `npm run api:report` writes what
 * each entry exports to `api/`.
 *
 * @packageDocumentation
 */
export * from './entries/client';
export * from './worker';
export * from './entries/testing';
