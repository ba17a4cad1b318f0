/**
 * durable-tools: durable tool calls for AI agents on Temporal.
 *
 * The root entry is what a tools module imports — `defineTool` and its variants, the tool types, the errors a
 * tool throws, the idempotency-key helpers and the error family (`DurableToolsError`, `errors`) — and nothing
 * else. Why that and not everything: a tools module is the one file every side of an app shares. The worker runs
 * it, workflows read its types (`proxyTools<typeof tools>`), clients and tests import it; so `import { defineTool }
 * from 'durable-tools'` must load no worker, no bundler, no client, no SQLite and no Postgres code, and must
 * not put the engine's whole surface in every editor's completion list.
 *
 * Each audience has its own entry: `durable-tools/worker` (this list, stores, models, `createWorker`, MCP,
 * telemetry), `durable-tools/client` (start, watch, approve, fork, evaluate runs), `durable-tools/testing` (a
 * local dev server, the scripted model, in-memory stores). `npm run api:report` writes what each entry exports
 * to `api/`; api/HISTORY.md lists what left the entries.
 *
 * @packageDocumentation
 */
export * from './entries/tools';
