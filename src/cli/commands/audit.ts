import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  AUDIT_STORE_ENV,
  auditStoreConfigFromEnv,
  createAuditStore,
  type AuditStoreConfig,
} from '../../stores/audit/create-audit-store';
import { parseCommandArgs, positiveIntOption, stringOption } from '../args';
import { EXIT_CODES, type CliCommand, type CliContext } from '../command';
import { auditRecordLines } from '../approval-view';

/** `durable-tools audit [run]`: the audit trail of gated calls, from the store the worker writes. */
export const auditCommand: CliCommand = {
  name: 'audit',
  help: `usage: durable-tools audit [workflow id] [--tool <name>] [--limit <n>] [--json]

Prints the audit trail of the tool calls that needed approval, newest request first: one record per call
(idempotency key, tool, arguments), its digest, when it was requested, the decision (approved, rejected,
timed_out, or waived by the run's policy; by whom, when, why) and the outcome (succeeded, failed, or not_run with its code).

It reads the store the worker writes, chosen the same way: ${AUDIT_STORE_ENV.store}=sqlite (default, the file
${AUDIT_STORE_ENV.sqlitePath}, default .data/audit.sqlite under the working directory) or postgres
(${AUDIT_STORE_ENV.postgresUrl}). A worker with the memory store keeps no trail to read.

options:
  --tool <name>   only calls of this tool
  --limit <n>     at most n records (default 100)
  --json          the records as a JSON array
  -h, --help      this help

exit codes: 0 printed (also when there are none), 1 no audit store to read or the store failed, 2 bad arguments`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      { tool: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
      { min: 0, max: 1, names: '[workflow id]' },
    );
    if (help) return (context.out(auditCommand.help), EXIT_CODES.ok);
    const limit = positiveIntOption(values, 'limit', 100);
    const tool = stringOption(values, 'tool');
    const config = readableStore(context);
    if (!config) return EXIT_CODES.error;
    const store = createAuditStore(config);
    try {
      const records = await store.list({
        ...(positionals[0] !== undefined ? { workflowId: positionals[0] } : {}),
        ...(tool !== undefined ? { tool } : {}),
        limit,
      });
      if (values.json === true) context.out(JSON.stringify(records, null, 2));
      else if (records.length === 0) context.out('No audit records.');
      else for (const record of records) for (const line of auditRecordLines(record)) context.out(line);
      return EXIT_CODES.ok;
    } finally {
      await store.close();
    }
  },
};

/** The store the environment names, if there is one to read (an SQLite file is not created by reading it). */
function readableStore(context: CliContext): AuditStoreConfig | undefined {
  const config = auditStoreConfigFromEnv(context.env);
  if (config.kind === 'memory') {
    context.err(
      `${AUDIT_STORE_ENV.store}=memory: the trail lives in the worker's memory, there is nothing to read. Use sqlite or postgres.`,
    );
    return undefined;
  }
  if (config.kind !== 'sqlite') return config;
  const path = resolve(context.cwd, config.path ?? '.data/audit.sqlite');
  if (!existsSync(path)) {
    context.err(
      `No audit trail at ${path}: no worker with ${AUDIT_STORE_ENV.store}=sqlite has written one here. Set ${AUDIT_STORE_ENV.sqlitePath} (or ${AUDIT_STORE_ENV.store}=postgres) as for the worker.`,
    );
    return undefined;
  }
  return { kind: 'sqlite', path };
}
