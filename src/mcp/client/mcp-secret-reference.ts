import { readFileSync } from 'node:fs';
import { McpOAuthError } from './mcp-oauth-error';

/**
 * Reads the secret a reference names: `env:NAME` from `env`, `file:PATH` from the file (trimmed). The error says
 * which reference is missing or empty, never any value.
 *
 * @throws {@link McpOAuthError} `SECRET_MISSING` when the variable is unset or empty, or the file unreadable or empty.
 */
export function readSecretReference(
  reference: string,
  where: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  let value: string | undefined;
  if (reference.startsWith('env:')) value = env[reference.slice('env:'.length)];
  else if (reference.startsWith('file:')) {
    try {
      value = readFileSync(reference.slice('file:'.length), 'utf8').trim();
    } catch (cause) {
      throw new McpOAuthError(
        `${where}: the secret file of ${reference} cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'}).`,
        'SECRET_MISSING',
      );
    }
  } else throw new McpOAuthError(`${where}: "${reference}" is no secret reference.`, 'SECRET_MISSING');
  if (value === undefined || value === '') {
    throw new McpOAuthError(`${where}: the secret ${reference} is not set (or empty).`, 'SECRET_MISSING');
  }
  return value;
}
