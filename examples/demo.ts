/**
 * `npm start`: a whole agent run on a real Temporal server, offline. Starts (or reuses) a dev server,
 * runs a worker in this process, runs the trip-booking agent, prints each step as it happens and the
 * URL of the run in the Temporal UI, then stops what it started and exits 0.
 *
 * With a model configured in the environment (`DURABLE_TOOLS_MODEL=openai-compatible:<model>` and
 * `OPENAI_COMPATIBLE_BASE_URL`, or `openai` / `anthropic` with their API keys), the same trip is run by
 * that model instead of the scripted one.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { agentRunUrl, connectClient, startAgentRun, waitForAgentRun } from '../src/client/agent-run-client';
import { connectionSettingsFromEnv } from '../src/client/connection-settings';
import { ensureLocalTemporal } from '../src/dev-server/local-temporal';
import {
  createConfiguredModelProvider,
  DEFAULT_MODEL_IDS,
  modelProviderConfigFromEnv,
  type ModelProviderConfig,
} from '../src/model/configured-model-providers';
import type { ModelSettings } from '../src/contract/model-types';
import { createWorker } from '../src/runtime/create-worker';
import { getRunStateQuery } from '../src/contract/agent-run-messages';
import { temporalShowCommand } from '../src/cli/hints';
import { Lifecycle } from '../src/cli/lifecycle';
import { createIdempotencyStore } from '../src/stores/idempotency/create-idempotency-store';
import { SqliteTranscriptStore } from '../src/stores/transcripts/sqlite-transcript-store';
import type { AgentRunInput, AgentRunState } from '../src/contract/agent-run-types';
import { LiveSteps, outputWidth, plural } from '../src/cli/run-view';
import { DemoApprover } from './demo-approval';
import { tripScript, tripScriptDeclined } from './trip-script';
import { tools } from './trip-tools';
import { demoMcpServers, mcpScript } from './mcp-scenario';

/** How often the demo polls the run's state. */
const DEMO_TIMING = { pollIntervalMs: 150 } as const;

/** The demo's scenarios: `npm start`, `npm start -- --scenario compensation` or `npm start -- --scenario mcp`. */
const SCENARIOS = {
  booking: {
    title: 'an agent books a trip Lisbon → Berlin, every tool call a durable Temporal activity',
    expected: 'completed',
    goal: 'Book me a trip from Lisbon to Berlin on 18 December for two, 3 nights, and pay for it.',
    script: tripScript,
    input: {},
  },
  compensation: {
    title: 'the card is declined at the end, so the engine undoes the bookings (saga), newest first',
    expected: 'compensated',
    goal: 'Book me a trip from Lisbon to Berlin on 18 December for two, 3 nights in a suite, and pay for it.',
    script: tripScriptDeclined,
    input: { failurePolicy: { criticalTools: ['pay'] } },
  },
  mcp: {
    title:
      'the agent also uses the tools of an MCP server (server-everything over stdio), each call a durable activity',
    expected: 'completed',
    goal: 'Book me a trip from Lisbon to Berlin on 18 December for two, 3 nights, and pay for it.',
    script: mcpScript,
    input: {},
    mcp: demoMcpServers,
  },
} as const;

/** The run's model: the one configured in the environment, or the scenario's offline script. */
function demoModel(config: ModelProviderConfig | undefined, script: ModelSettings['script']): ModelSettings {
  return config ? { provider: config.kind } : { provider: 'scripted', script };
}

function describeModel(config: ModelProviderConfig | undefined): string {
  if (!config) return 'scripted (offline)';
  const model = config.model ?? DEFAULT_MODEL_IDS[config.kind] ?? '(no model id)';
  return `${config.kind}:${model}${config.baseURL ? ` at ${config.baseURL}` : ''}`;
}

/** `npm start -- --help`. */
const DEMO_USAGE = `usage: npm start [-- --scenario ${Object.keys(SCENARIOS).join('|')}]

Runs the trip-booking agent on a Temporal server (TEMPORAL_ADDRESS, else the one answering on 127.0.0.1:7233,
else a local dev server started here and stopped at the end), with a worker in this process, printing each
step. Ctrl-C or SIGTERM stops watching (the run goes on in Temporal) and stops what the demo started.
A model from DURABLE_TOOLS_MODEL (openai, anthropic, openai-compatible:<model>) replaces the scripted one.

exit codes: 0 the run ended as the scenario expects, 1 it did not or an error, 130/143 Ctrl-C/SIGTERM`;

function scenarioFromArgs(argv: string[]): keyof typeof SCENARIOS {
  const index = argv.indexOf('--scenario');
  const name = index >= 0 ? argv[index + 1] : argv.find((a) => a.startsWith('--scenario='))?.split('=')[1];
  if (name === undefined) return 'booking';
  if (name in SCENARIOS) return name as keyof typeof SCENARIOS;
  throw new Error(`Unknown scenario "${name}"; use one of: ${Object.keys(SCENARIOS).join(', ')}.`);
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) return void console.log(DEMO_USAGE);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const scenario = SCENARIOS[scenarioFromArgs(process.argv.slice(2))];
  // Ctrl-C / SIGTERM, or the npm wrapper going away: stop watching, then stop the worker and the server.
  const lifecycle = new Lifecycle().listen();
  const settings = connectionSettingsFromEnv();
  const modelConfig = modelProviderConfigFromEnv(); // DURABLE_TOOLS_MODEL; unset means the scripted model
  const modelProviders = modelConfig ? { [modelConfig.kind]: await createConfiguredModelProvider(modelConfig) } : {};
  console.log(`durable-tools demo: ${scenario.title}.`);
  console.log(`Model: ${describeModel(modelConfig)}`);
  const temporal = await ensureLocalTemporal(settings);
  console.log(`Temporal server: ${temporal.address}${temporal.uiUrl ? `   Web UI: ${temporal.uiUrl}` : ''}`);
  const taskQueue = `${settings.taskQueue}-demo`;
  const started = Date.now();
  try {
    const client = await connectClient({ ...settings, address: temporal.address });
    // The embedded defaults: idempotency keys and transcripts in SQLite files under .data/.
    const idempotencyStore = createIdempotencyStore();
    const transcripts = new SqliteTranscriptStore();
    const { worker, close } = await createWorker({
      tools,
      idempotencyStore,
      transcripts,
      modelProviders,
      settings: { ...settings, address: temporal.address, taskQueue },
      ...('mcp' in scenario ? { mcp: scenario.mcp } : {}),
    });
    const state = await worker.runUntil(async () => {
      const handle = await startAgentRun(
        client,
        {
          goal: scenario.goal,
          model: demoModel(modelConfig, scenario.script),
          ...scenario.input,
        } as AgentRunInput,
        { taskQueue },
      );
      console.log(`Run ${handle.workflowId} started.\n`);
      const printer = new LiveSteps((line) => console.log(line), outputWidth(process.stdout.isTTY === true));
      const approver = new DemoApprover(client);
      let done = false;
      const result = waitForAgentRun(handle).finally(() => (done = true));
      while (!done && lifecycle.signal === undefined) {
        const live = await handle.query(getRunStateQuery).catch(() => undefined);
        printer.update(live);
        await approver.decide(live);
        await new Promise((r) => setTimeout(r, DEMO_TIMING.pollIntervalMs));
      }
      if (!done) {
        result.catch(() => {}); // the connection closes below; the run itself goes on
        return { final: undefined, workflowId: handle.workflowId };
      }
      const final = (await result) as AgentRunState;
      printer.update(final);
      const description = await handle.describe();
      const url = temporal.uiUrl
        ? agentRunUrl(temporal.uiUrl, temporal.namespace, handle.workflowId, description.runId)
        : undefined;
      return { final, url, workflowId: handle.workflowId };
    });
    await close();
    await client.connection.close();
    await idempotencyStore.close();
    await transcripts.close();
    if (!state.final) {
      console.log(`\nStopped (${lifecycle.signal}); run ${state.workflowId} is not finished: it goes on in Temporal`);
      console.log(
        `(with this demo's worker, the next time it runs). npm run -s durable-tools -- cancel ${state.workflowId}`,
      );
      process.exitCode = lifecycle.signal === 'SIGINT' ? 130 : 143;
      return;
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `\nRun ${state.final.status} in ${seconds} s after ${plural(state.final.turns, 'model turn')} and ${plural(state.final.steps.length, 'tool call')}.`,
    );
    if (state.final.answer) console.log(`Answer: ${state.final.answer}`);
    const usage = state.final.usage;
    if (usage && usage.inputTokens + usage.outputTokens > 0) {
      console.log(`Tokens: ${usage.inputTokens} in, ${usage.outputTokens} out.`);
    }
    if (state.final.reason) console.log(`Why: ${state.final.reason}`);
    if (state.url) console.log(`Open the run in the Temporal UI: ${state.url}`);
    const history = await temporalShowCommand(temporal.address, temporal.namespace, state.workflowId);
    if (history) console.log(`History on the command line: ${history}`);
    if (state.final.status !== scenario.expected) process.exitCode = 1;
  } finally {
    await temporal.stop();
    await lifecycle.stopAll();
  }
}

main().catch((error: unknown) => {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
