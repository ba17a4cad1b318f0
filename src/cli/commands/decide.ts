/**
 * `durable-tools approve <run> [step]` and `durable-tools reject <run> [step] --reason …`: print the waiting
 * call (tool, arguments, digest), then send the run's `decideApproval` update bound to that digest.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { approveStep, getPendingApprovals, rejectStep, type PendingApproval } from '../../client/approval-client';
import { ApprovalError } from '../../client/approval-error';
import { parseCommandArgs, stringOption, type ParsedValues } from '../args';
import { CliUsageError, EXIT_CODES, type CliCommand, type CliContext } from '../command';
import { callUnderReviewLines } from '../approval-view';
import { terminalConfirm } from '../confirm';
import { connectForCommand } from '../connect';
import { COMMAND_SPAN_ATTRIBUTES, startCommandTracing, traced, type CommandTracing } from '../command-tracing';

type DecisionKind = 'approve' | 'reject';

const OPTIONS = {
  digest: { type: 'string' },
  approver: { type: 'string' },
  reason: { type: 'string' },
  arguments: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
} as const;

const COMMON_HELP = `  --digest <sha256>    the digest you reviewed (from \`pending\`): refused, with nothing done, when the
                       call's arguments have another digest
  --approver <name>    who decides (default: $USER)
  -y, --yes            do not ask on a terminal (without a terminal the command never asks)
  -h, --help           this help

Without a step, the run's only waiting call (or, with --digest, the waiting call of that digest).

exit codes: 0 decided (the run goes on), 1 not decided: no such run, no such waiting call, the digest
changed, already decided, answered no, or the server is unreachable, 2 bad arguments`;

/** `durable-tools approve`. */
export const approveCommand: CliCommand = {
  name: 'approve',
  help: `usage: durable-tools approve <workflow id> [step] [--digest <sha256>] [--arguments <json>] [--approver <name>] [--reason <text>] [--yes]

Prints the waiting call (tool, arguments, digest), asks on a terminal, then approves it through the run's
decideApproval update, bound to the printed digest. The tool then runs once, under the step's idempotency key.

options:
  --arguments <json>   approve with these arguments instead (a JSON object): the worker validates them with the
                       tool's schema, the call runs with them, and the audit trail keeps both
  --reason <text>      why (kept in the audit trail)
${COMMON_HELP}`,
  run: (argv, context) => decide('approve', argv, context),
};

/** `durable-tools reject`. */
export const rejectCommand: CliCommand = {
  name: 'reject',
  help: `usage: durable-tools reject <workflow id> [step] --reason <text> [--digest <sha256>] [--approver <name>] [--yes]

Prints the waiting call (tool, arguments, digest), asks on a terminal, then rejects it through the run's
decideApproval update. Nothing is run: the model gets the reason as an error observation
(APPROVAL_REJECTED), or the run aborts and compensates what it did, as the run's approval.onRejection says.

options:
  --reason <text>      why (required: the model reads it; kept in the audit trail)
${COMMON_HELP}`,
  run: (argv, context) => decide('reject', argv, context),
};

/** What the command line asks for. */
interface DecisionRequest {
  kind: DecisionKind;
  workflowId: string;
  stepId?: number;
  digest?: string;
  approver: string;
  reason?: string;
  /** Edited arguments to approve instead of the model's (approve only). */
  arguments?: Record<string, unknown>;
  yes: boolean;
}

async function decide(kind: DecisionKind, argv: string[], context: CliContext): Promise<number> {
  const command = kind === 'approve' ? approveCommand : rejectCommand;
  const { values, positionals, help } = parseCommandArgs(argv, OPTIONS, { min: 1, max: 2, names: '<workflow id>' });
  if (help) return (context.out(command.help), EXIT_CODES.ok);
  const request = decisionRequest(kind, values, positionals, context);
  const tracing = await startCommandTracing(context, kind);
  const { client } = await connectForCommand(context, { tracing });
  const call = await findCall(client, request, context);
  if (!call) return EXIT_CODES.error;
  for (const line of callUnderReviewLines(call)) context.out(line);
  if (request.digest !== undefined && request.digest !== call.digest) {
    context.err(
      `The digest changed: you reviewed ${request.digest}, the call's arguments now have ${call.digest}. Nothing was done: review the arguments above and decide again.`,
    );
    return EXIT_CODES.error;
  }
  const confirm = request.yes ? undefined : terminalConfirm();
  const verb = kind === 'approve' ? 'Approve' : 'Reject';
  if (confirm && !(await confirm(`${verb} this call as ${request.approver}? [y/N] `))) {
    context.err('Nothing was done.');
    return EXIT_CODES.error;
  }
  return send(client, request, call, context, tracing);
}

function decisionRequest(
  kind: DecisionKind,
  values: ParsedValues,
  positionals: string[],
  context: CliContext,
): DecisionRequest {
  const [workflowId, stepText] = positionals as [string, string | undefined];
  const stepId = stepText === undefined ? undefined : Number(stepText);
  if (stepId !== undefined && !(Number.isInteger(stepId) && stepId > 0)) {
    throw new CliUsageError(`The step must be a step number (1, 2, ...), not "${stepText}".`);
  }
  const digest = stringOption(values, 'digest')?.trim().toLowerCase();
  if (digest !== undefined && !/^[0-9a-f]{64}$/.test(digest)) {
    throw new CliUsageError(`--digest must be the 64 hex digits \`pending\` prints, not "${digest}".`);
  }
  const reason = stringOption(values, 'reason')?.trim() || undefined;
  if (kind === 'reject' && reason === undefined) {
    throw new CliUsageError('A rejection needs --reason <text> (the model reads it).');
  }
  const approver = (stringOption(values, 'approver') ?? context.env.USER ?? '').trim();
  if (!approver) throw new CliUsageError('Say who decides with --approver <name> (USER is not set).');
  const edited = editedArguments(kind, stringOption(values, 'arguments'));
  return {
    kind,
    workflowId,
    ...(stepId !== undefined ? { stepId } : {}),
    ...(digest !== undefined ? { digest } : {}),
    approver,
    ...(reason !== undefined ? { reason } : {}),
    ...(edited !== undefined ? { arguments: edited } : {}),
    yes: values.yes === true,
  };
}

/** `--arguments`: a JSON object, with `approve` only. */
function editedArguments(kind: DecisionKind, text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  if (kind !== 'approve') throw new CliUsageError('--arguments comes with approve only.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliUsageError(`--arguments must be JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliUsageError("--arguments must be a JSON object of the tool's parameters.");
  }
  return value as Record<string, unknown>;
}

/** The waiting call the request names, or undefined after saying why there is none. */
async function findCall(
  client: Client,
  request: DecisionRequest,
  context: CliContext,
): Promise<PendingApproval | undefined> {
  const { workflowId, stepId, digest } = request;
  let pending: PendingApproval[];
  try {
    pending = await getPendingApprovals(client, workflowId);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) {
      context.err(`No run ${workflowId}.`);
      return undefined;
    }
    context.err(
      `Cannot read the calls of run ${workflowId}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
  const steps = pending.map((p) => p.stepId).join(', ');
  if (stepId !== undefined) {
    // A step number names a step of this run; its sub-agents' calls are decided by their own id (or without a step).
    const call = pending.find((p) => p.stepId === stepId && p.workflowId === workflowId);
    if (!call) {
      context.err(
        `Step ${stepId} of run ${workflowId} is not waiting for approval${pending.length ? ` (waiting: step ${steps})` : ''}.`,
      );
    }
    return call;
  }
  if (pending.length === 0) context.err(`Run ${workflowId} has no call waiting for approval.`);
  if (pending.length <= 1) return pending[0];
  const byDigest = digest === undefined ? [] : pending.filter((p) => p.digest === digest);
  if (byDigest.length === 1) return byDigest[0];
  context.err(`Run ${workflowId} has ${pending.length} calls waiting (steps ${steps}): name the step.`);
  return undefined;
}

async function send(
  client: Client,
  request: DecisionRequest,
  call: PendingApproval,
  context: CliContext,
  tracing?: CommandTracing,
): Promise<number> {
  const decision = {
    stepId: call.stepId,
    digest: call.digest,
    approver: request.approver,
    ...(request.reason !== undefined ? { reason: request.reason } : {}),
    ...(request.arguments !== undefined ? { arguments: request.arguments } : {}),
  };
  try {
    // Traced inside the run's trace: the decision is a span of the run it decides on.
    const attributes = {
      [COMMAND_SPAN_ATTRIBUTES.stepId]: call.stepId,
      [COMMAND_SPAN_ATTRIBUTES.tool]: call.tool,
      [COMMAND_SPAN_ATTRIBUTES.decision]: request.kind === 'approve' ? 'approved' : 'rejected',
    };
    const result = await traced(tracing, client, { run: call.workflowId, attributes }, () =>
      request.kind === 'approve'
        ? approveStep(client, call.workflowId, decision)
        : rejectStep(client, call.workflowId, { ...decision, reason: request.reason ?? '' }),
    );
    context.out(
      result.decision === 'approved'
        ? `Approved by ${result.approver}${result.editedDigest ? ` with edited arguments (digest ${result.editedDigest})` : ''}: step ${result.stepId} (${result.tool}) runs now. Follow it with \`${context.self} show ${request.workflowId}\`.`
        : `Rejected by ${result.approver}: step ${result.stepId} (${result.tool}) will not run.`,
    );
    return EXIT_CODES.ok;
  } catch (error) {
    if (!(error instanceof ApprovalError)) throw error;
    context.err(`Refused (${error.code}): ${error.message} Nothing was done.`);
    return EXIT_CODES.error;
  }
}
