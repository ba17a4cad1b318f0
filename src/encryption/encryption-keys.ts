import { readFileSync } from 'node:fs';
import { EncryptionError } from './encryption-error';

/** Environment variables read by {@link encryptionKeysFromEnv}. */
export const ENCRYPTION_ENV = {
  /** `id:base64key` entries separated by commas or whitespace; the first is the current key. */
  keys: 'DURABLE_TOOLS_ENCRYPTION_KEYS',
  /** A file holding the same list (one entry a line; `#` starts a comment). */
  keysFile: 'DURABLE_TOOLS_ENCRYPTION_KEYS_FILE',
} as const;

/** One AES-256 key and the id written next to everything it encrypts. */
export interface EncryptionKey {
  /** 1–64 characters of `A-Z a-z 0-9 . _ -`; stored in clear beside each ciphertext. */
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/**
 * The keys of payload and store encryption. New data is encrypted with `current`; data encrypted with any
 * key of `keys` (the current one and retired ones kept for reading) stays readable, so keys rotate by putting
 * a new key first and keeping the old ones until nothing needs them.
 */
export interface EncryptionKeyring {
  /** The key new ciphertexts use (the first one configured). */
  current: EncryptionKey;
  /** Every configured key by id, the current one included. */
  keys: ReadonlyMap<string, EncryptionKey>;
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Builds a keyring from `id:base64key` entries (commas, whitespace or new lines between them; `#` comments),
 * the first being the current key. Each key must decode to exactly 32 bytes (e.g. `openssl rand -base64 32`).
 *
 * @throws {@link EncryptionError} `INVALID_ENCRYPTION_KEYS` naming the bad entry by its position (never its id
 * or key material: an entry written the wrong way round would put the key where the id goes).
 *
 * @example
 * ```ts
 * const keyring = parseEncryptionKeys('2026-11:q0v…=, 2026-05:Zm9…=');
 * ```
 */
export function parseEncryptionKeys(text: string, source = 'the encryption keys'): EncryptionKeyring {
  const entries = text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join(' ')
    .split(/[\s,]+/)
    .filter((entry) => entry !== '');
  if (entries.length === 0) {
    throw invalid(`${source} list no key: give at least one "id:base64key" entry (the first is the current key).`);
  }
  const keys = new Map<string, EncryptionKey>();
  const positions = new Map<string, number>();
  entries.forEach((entry, index) => {
    const key = parseEntry(entry, `entry ${index + 1} of ${source}`);
    const first = positions.get(key.id);
    if (first !== undefined) {
      throw invalid(`Entries ${first} and ${index + 1} of ${source} have the same key id: key ids must be unique.`);
    }
    positions.set(key.id, index + 1);
    keys.set(key.id, key);
  });
  return { current: keys.values().next().value as EncryptionKey, keys };
}

function parseEntry(entry: string, where: string): EncryptionKey {
  const colon = entry.indexOf(':');
  if (colon < 0) throw invalid(`The ${where} is not "id:base64key" (no colon).`);
  const id = entry.slice(0, colon);
  const material = entry.slice(colon + 1);
  if (!KEY_ID.test(id)) {
    throw invalid(
      `The ${where} has an invalid key id (${id.length} characters): use 1-64 characters of A-Z a-z 0-9 . _ -.`,
    );
  }
  const key = BASE64.test(material)
    ? Buffer.from(material, material.includes('-') || material.includes('_') ? 'base64url' : 'base64')
    : undefined;
  if (key === undefined || key.length !== 32) {
    throw invalid(
      `The key of the ${where} must be 32 bytes in base64 (e.g. \`openssl rand -base64 32\`), ` +
        `not ${key === undefined ? 'text that is not base64' : `${key.length} bytes`}.`,
    );
  }
  return { id, key };
}

/**
 * The keyring the environment configures: `DURABLE_TOOLS_ENCRYPTION_KEYS` (`id:base64key` entries, first =
 * current) or `DURABLE_TOOLS_ENCRYPTION_KEYS_FILE` (a file with the same entries); undefined when neither is
 * set (encryption off). Keys never come from the repository: set them in the process environment or a file
 * outside it.
 *
 * @throws {@link EncryptionError} `INVALID_ENCRYPTION_KEYS` for a malformed list, an unreadable file, or both
 * variables set at once.
 */
export function encryptionKeysFromEnv(env: NodeJS.ProcessEnv = process.env): EncryptionKeyring | undefined {
  const inline = env[ENCRYPTION_ENV.keys]?.trim() || undefined;
  const file = env[ENCRYPTION_ENV.keysFile]?.trim() || undefined;
  if (inline !== undefined && file !== undefined) {
    throw invalid(`Set ${ENCRYPTION_ENV.keys} or ${ENCRYPTION_ENV.keysFile}, not both.`);
  }
  if (inline !== undefined) return parseEncryptionKeys(inline, ENCRYPTION_ENV.keys);
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new EncryptionError(
      `${ENCRYPTION_ENV.keysFile} names ${file}, which cannot be read: ${(error as Error).message}`,
      'INVALID_ENCRYPTION_KEYS',
      { cause: error },
    );
  }
  return parseEncryptionKeys(text, file);
}

/**
 * The keyring of a `createWorker` / `connectClient` option: the keys given, none for `false` (encryption
 * off), the environment's ({@link encryptionKeysFromEnv}) when the option is absent.
 */
export function resolveEncryptionKeys(option: EncryptionKeyring | false | undefined): EncryptionKeyring | undefined {
  if (option === false) return undefined;
  return option ?? encryptionKeysFromEnv();
}

function invalid(message: string): EncryptionError {
  return new EncryptionError(message, 'INVALID_ENCRYPTION_KEYS');
}
