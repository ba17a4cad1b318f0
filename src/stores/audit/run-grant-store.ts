import type { RunGrant } from '../../contract/run-grant';

/**
 * Where the grants of runs are recorded (docs/security.md, "Authority of a run"): one per workflow id, written once
 * by a trusted starter before the run starts (or by the activity that prepares a child, before the child starts) and
 * never changed. The engine's audit stores (SQLite, Postgres, memory) are grant stores too, in a table of their own.
 */
export interface RunGrantStore {
  /** Records `grant` unless a grant of its workflow id is recorded already; answers the recorded one. */
  recordGrant(grant: RunGrant): Promise<RunGrant>;
  /** The grant of a run, or undefined when none was recorded. */
  grantOf(workflowId: string): Promise<RunGrant | undefined>;
}

/** The store as a grant store, when it is one (the engine's audit stores are); undefined otherwise. */
export function asRunGrantStore(store: unknown): RunGrantStore | undefined {
  if (typeof store !== 'object' || store === null) return undefined;
  const candidate = store as Partial<RunGrantStore>;
  return typeof candidate.recordGrant === 'function' && typeof candidate.grantOf === 'function'
    ? (store as RunGrantStore)
    : undefined;
}

/** A grant read back from its stored JSON text, or undefined when the text is not one. */
export function grantFromJson(workflowId: string, text: string): RunGrant | undefined {
  try {
    const value = JSON.parse(text) as Partial<RunGrant>;
    if (!Array.isArray(value.tools) || !value.tools.every((t) => typeof t === 'string')) return undefined;
    return { ...value, workflowId, tools: value.tools, grantedAt: Number(value.grantedAt ?? 0) };
  } catch {
    return undefined;
  }
}
