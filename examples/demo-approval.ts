/**
 * The demo's approval step: `pay` is irreversible, so it waits for a human. With a terminal the demo asks;
 * without one it prints what it approves and approves through the same update, so `npm start` runs unattended.
 */
import type { Client } from '@temporalio/client';
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline/promises';
import { approveStep, rejectStep } from '../src/client/approval-client';
import type { AgentRunState } from '../src/contract/agent-run-types';

/** Decides every call of the run that waits for approval and was not handled yet. */
export class DemoApprover {
  private readonly handled = new Set<number>();

  constructor(
    private readonly client: Client,
    private readonly interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY),
  ) {}

  async decide(state: AgentRunState | undefined): Promise<void> {
    for (const step of state?.steps ?? []) {
      if (step.status !== 'awaiting_approval' || !step.approval || this.handled.has(step.stepId)) continue;
      this.handled.add(step.stepId);
      const { digest, arguments: args } = step.approval;
      console.log(`          ⏸ needs approval: ${step.tool} ${JSON.stringify(args)}`);
      console.log(`            argument digest (SHA-256 of the canonical JSON): ${digest}`);
      const target = { stepId: step.stepId, digest, approver: approverName() };
      if (this.interactive ? await ask(`            Approve this call? [y/N] `) : true) {
        if (!this.interactive)
          console.log(`            no terminal: approving as "${target.approver}" through the decideApproval update`);
        await approveStep(this.client, state!.runId, { ...target, reason: 'approved in the demo' });
        console.log(`            ✓ approved by ${target.approver}`);
      } else {
        await rejectStep(this.client, state!.runId, { ...target, reason: 'rejected at the terminal' });
        console.log(`            ✗ rejected by ${target.approver}`);
      }
    }
  }
}

function approverName(): string {
  try {
    return `${userInfo().username} (demo)`;
  } catch {
    return 'demo operator';
  }
}

async function ask(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}
