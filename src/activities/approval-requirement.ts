import type { Tool } from '../tools/define-tool';

/**
 * Whether a tool itself requires approval for a call with these validated arguments: its predicate's answer (a
 * predicate that throws means yes, and `notes` says why), else its catalog word (`'conditional'` without a
 * predicate on this worker means yes: ask rather than let it through). The run's own word (`approval.tools`,
 * `requireForEffects`) is not part of it. `evaluateApproval` asks before the gate, the tool activity before it
 * runs a call (recorded-approval.ts).
 */
export async function declaredRequirement(tool: Tool, validated: unknown, notes: string[] = []): Promise<boolean> {
  const declared = tool.contract.spec.approval as unknown;
  if (typeof declared === 'function') {
    try {
      return Boolean(await (declared as (input: unknown) => boolean | Promise<boolean>)(validated));
    } catch (error) {
      notes.push(
        `The approval predicate of "${tool.contract.name}" failed (${error instanceof Error ? error.message : String(error)}): approval is required.`,
      );
      return true;
    }
  }
  return tool.contract.catalogEntry.approval !== 'never';
}
