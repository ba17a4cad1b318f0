/**
 * The approval commands of the command line: `pending`, `approve <run> [step]`, `reject <run> [step] --reason …`
 * and `audit [run]`. Each takes its arguments and an {@link ApprovalCommandIo} (a client, output, an optional
 * confirmation prompt) and resolves to an exit code; `src/cli/commands/approvals.ts` plugs them into
 * `durable-tools`.
 */
import type { Client } from '@temporalio/client';
import { parseArgs } from 'node:util';
import {
  approveStep,
  getPendingApprovals,
  listPendingApprovals,
  rejectStep,
  type PendingApproval,
} from './approval-client';
import { ApprovalError } from './approval-error';
import type { ApprovalAuditRecord } from './approval-types';
import type { AuditStore } from './audit-store';

/** Exit codes of the approval commands (the same as every `durable-tools` command). */
export const APPROVAL_COMMAND_EXIT = { ok: 0, error: 1, usage: 2 } as const;

/** What the approval commands need from their environment. */
export interface ApprovalCommandIo {
  client: Client;
  out(line: string): void;
  err(line: string): void;
  /** Asks a yes/no question on a terminal; without it the command acts after printing what it does. */
  confirm?: (question: string) => Promise<boolean>;
  /** Who decides when `--approver` is not given (default: the USER environment variable). */
  approver?: string;
  /** Opens the audit store `audit` reads (default: none, and `audit` says so). */
  openAuditStore?: () => AuditStore;
}

/** Help texts of the commands. */
export const APPROVAL_COMMAND_HELP = {
  pending: `usage: durable-tools pending [--tool <name>] [--task-queue <queue>] [--json]

Lists the tool calls waiting for a human decision: run, step, tool, arguments and the digest (SHA-256 of the
canonical JSON of the validated arguments) that a decision must name. Runs are found by a visibility query on
the DurableAwaitingApproval search attribute, which lags a moment behind.`,
  approve: `usage: durable-tools approve <run id> [step] [--digest <sha256>] [--approver <name>] [--reason <text>] [--yes]

Prints the call's tool, arguments and digest, then approves it: the tool runs once, under the step's
idempotency key. Without a step, the run's only waiting call. --digest pins the digest you reviewed (from
'pending'): the command refuses to act when the call's digest is another. On a terminal it asks first, unless
--yes.`,
  reject: `usage: durable-tools reject <run id> [step] --reason <text> [--digest <sha256>] [--approver <name>] [--yes]

Prints the call's tool, arguments and digest, then rejects it. The model gets the reason as an observation,
or the run aborts and compensates, as the run's approval.onRejection says.`,
  audit: `usage: durable-tools audit [run id] [--tool <name>] [--limit <n>] [--json]

Prints the audit trail of gated calls (newest first): tool, key, digest, decision, who decided, reason,
outcome and times, from the audit store (DURABLE_TOOLS_AUDIT_STORE=sqlite|postgres, as the worker's).`,
} as const;

/** `pending`: the calls waiting for a decision. */
export async function pendingCommand(argv: string[], io: ApprovalCommandIo): Promise<number> {
  const { values } = parse(argv, {
    tool: { type: 'string' },
    'task-queue': { type: 'string' },
    json: { type: 'boolean' },
  });
  const pending = await listPendingApprovals(io.client, {
    ...(typeof values.tool === 'string' ? { tool: values.tool } : {}),
    ...(typeof values['task-queue'] === 'string' ? { taskQueue: values['task-queue'] } : {}),
    onUnreadable: (workflowId, error) =>
      io.err(`Run ${workflowId} waits for approval but its state could not be read: ${message(error)}`),
  });
  if (values.json === true) {
    io.out(JSON.stringify(pending, null, 2));
    return APPROVAL_COMMAND_EXIT.ok;
  }
  if (pending.length === 0) {
    io.out('No tool call is waiting for approval.');
    return APPROVAL_COMMAND_EXIT.ok;
  }
  for (const call of pending) {
    io.out(`${call.workflowId}  step ${call.stepId}  ${call.tool}  ${JSON.stringify(call.arguments)}`);
    io.out(`    digest ${call.digest}  waiting since ${iso(call.requestedAt)}, rejected at ${iso(call.deadline)}`);
  }
  io.out(
    `${pending.length} call${pending.length === 1 ? '' : 's'} waiting. Decide with: approve <run> <step> | reject <run> <step> --reason …`,
  );
  return APPROVAL_COMMAND_EXIT.ok;
}

/** `approve <run> [step]`. */
export function approveCommand(argv: string[], io: ApprovalCommandIo): Promise<number> {
  return decideCommand('approve', argv, io);
}

/** `reject <run> [step] --reason …`. */
export function rejectCommand(argv: string[], io: ApprovalCommandIo): Promise<number> {
  return decideCommand('reject', argv, io);
}

/** `audit [run]`: the audit trail. */
export async function auditCommand(argv: string[], io: ApprovalCommandIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    tool: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 1) return usage(io, 'audit', 'Too many arguments.');
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
    return usage(io, 'audit', '--limit must be a positive integer.');
  if (!io.openAuditStore) {
    io.err('No audit store is configured.');
    return APPROVAL_COMMAND_EXIT.error;
  }
  const store = io.openAuditStore();
  try {
    const records = await store.list({
      ...(positionals[0] !== undefined ? { workflowId: positionals[0] } : {}),
      ...(typeof values.tool === 'string' ? { tool: values.tool } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    if (values.json === true) io.out(JSON.stringify(records, null, 2));
    else if (records.length === 0) io.out('No audit records.');
    else for (const record of records) io.out(formatAuditRecord(record));
    return APPROVAL_COMMAND_EXIT.ok;
  } finally {
    await store.close();
  }
}

/** One audit record on two lines. */
export function formatAuditRecord(r: ApprovalAuditRecord): string {
  const decision = r.decision
    ? `${r.decision}${r.decidedBy ? ` by ${r.decidedBy}` : ''}${r.decidedAt ? ` at ${iso(r.decidedAt)}` : ''}${r.reason ? ` (${r.reason})` : ''}`
    : 'waiting for a decision';
  const outcome = r.outcome ? `${r.outcome}${r.outcomeCode ? ` ${r.outcomeCode}` : ''}` : '-';
  return (
    `${r.idempotencyKey}  ${r.tool}  ${JSON.stringify(r.arguments)}\n` +
    `    digest ${r.argumentsDigest}  requested ${iso(r.requestedAt)}  ${decision}  outcome ${outcome}`
  );
}

async function decideCommand(kind: 'approve' | 'reject', argv: string[], io: ApprovalCommandIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    digest: { type: 'string' },
    approver: { type: 'string' },
    reason: { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
  });
  const [workflowId, stepText, ...extra] = positionals;
  if (!workflowId || extra.length > 0)
    return usage(io, kind, workflowId ? 'Too many arguments.' : 'Missing argument: <run id>.');
  const reason = typeof values.reason === 'string' ? values.reason.trim() : undefined;
  if (kind === 'reject' && !reason) return usage(io, kind, 'A rejection needs --reason (the model reads it).');
  const stepId = stepText === undefined ? undefined : Number(stepText);
  if (stepId !== undefined && !(Number.isInteger(stepId) && stepId > 0))
    return usage(io, kind, `Not a step number: ${stepText}.`);
  const approver = (
    typeof values.approver === 'string' ? values.approver : (io.approver ?? process.env.USER ?? '')
  ).trim();
  if (!approver) return usage(io, kind, 'Say who decides with --approver <name>.');

  let pending: PendingApproval[];
  try {
    pending = await getPendingApprovals(io.client, workflowId);
  } catch (error) {
    io.err(`Cannot read run ${workflowId}: ${message(error)}`);
    return APPROVAL_COMMAND_EXIT.error;
  }
  const call =
    stepId === undefined ? (pending.length === 1 ? pending[0] : undefined) : pending.find((p) => p.stepId === stepId);
  if (!call) {
    io.err(
      pending.length === 0
        ? `Run ${workflowId} has no call waiting for approval.`
        : stepId === undefined
          ? `Run ${workflowId} has ${pending.length} calls waiting (steps ${pending.map((p) => p.stepId).join(', ')}): name the step.`
          : `Step ${stepId} of run ${workflowId} is not waiting for approval (waiting: ${pending.map((p) => p.stepId).join(', ')}).`,
    );
    return APPROVAL_COMMAND_EXIT.error;
  }
  io.out(`Run ${workflowId}, step ${call.stepId}: ${call.tool}`);
  io.out(`  arguments ${JSON.stringify(call.arguments, null, 2).replace(/\n/g, '\n  ')}`);
  io.out(`  digest    ${call.digest}`);
  if (typeof values.digest === 'string' && values.digest.trim().toLowerCase() !== call.digest) {
    io.err(
      `The digest changed: you reviewed ${values.digest.trim()}, the call now has ${call.digest}. Nothing was done.`,
    );
    return APPROVAL_COMMAND_EXIT.error;
  }
  if (
    io.confirm &&
    values.yes !== true &&
    !(await io.confirm(`${kind === 'approve' ? 'Approve' : 'Reject'} this call as ${approver}? [y/N] `))
  ) {
    io.out('Nothing was done.');
    return APPROVAL_COMMAND_EXIT.ok;
  }
  const decision = { stepId: call.stepId, digest: call.digest, approver, ...(reason ? { reason } : {}) };
  try {
    const result =
      kind === 'approve'
        ? await approveStep(io.client, workflowId, decision)
        : await rejectStep(io.client, workflowId, { ...decision, reason: reason! });
    io.out(
      `${result.decision === 'approved' ? 'Approved' : 'Rejected'} by ${result.approver}: step ${result.stepId} (${result.tool}).`,
    );
    return APPROVAL_COMMAND_EXIT.ok;
  } catch (error) {
    io.err(error instanceof ApprovalError ? `Refused (${error.code}): ${error.message}` : message(error));
    return APPROVAL_COMMAND_EXIT.error;
  }
}

type Options = Parameters<typeof parseArgs>[0] extends infer P ? (P extends { options?: infer O } ? O : never) : never;

function parse(argv: string[], options: Options) {
  return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
}

function usage(io: ApprovalCommandIo, command: keyof typeof APPROVAL_COMMAND_HELP, problem: string): number {
  io.err(`${problem}\n\n${APPROVAL_COMMAND_HELP[command]}`);
  return APPROVAL_COMMAND_EXIT.usage;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
