/**
 * Who acted, as authentication established it: the person (a subject of an issuer) and the client application they
 * acted through. Four eyes compare people, never apps: {@link samePerson}.
 */
export interface CallerIdentity {
  /** The authenticated principal (an OAuth `sub`, or `token:<name>` of a static token). */
  subject: string;
  /** The issuer whose `sub` this is (OAuth mode); absent for static tokens and no authentication. */
  issuer?: string;
  /** The client application the subject acted through (an OAuth `client_id` or `azp`), when known. */
  clientId?: string;
}

/**
 * The memo field of a workflow started for an authenticated caller (an MCP tool call, an agent run started through
 * MCP or with `startAgentRun({ grant: { holder } })`): the {@link CallerIdentity} of who started it.
 */
export const STARTED_BY_MEMO = 'startedBy';

/** Whether two identities are the same person: the same subject of the same issuer, whatever client each used. */
export function samePerson(a: CallerIdentity, b: CallerIdentity): boolean {
  return a.subject === b.subject && (a.issuer ?? null) === (b.issuer ?? null);
}

/** The identity as plain data (only its own three fields, for a memo, an audit record or a grant). */
export function identityRecord(identity: CallerIdentity): CallerIdentity {
  return {
    subject: identity.subject,
    ...(identity.issuer !== undefined ? { issuer: identity.issuer } : {}),
    ...(identity.clientId !== undefined ? { clientId: identity.clientId } : {}),
  };
}
