/**
 * A tools module for `durable-tools worker --tools` in the signal tests: `linger` writes `<dir>/started`, then
 * runs — cancelled or not — until the test writes `<dir>/release`, so a draining worker stays up as long as
 * the test needs (the directory comes from DRAIN_TOOLS_DIR).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool, type Tool } from '../../src/tools/define-tool';

export const tools: Tool[] = [
  defineTool({
    name: 'linger',
    description: 'Runs until the test releases it, even when cancelled.',
    input: z.object({}),
    output: z.object({ released: z.boolean() }),
    effect: 'read-only',
    idempotent: true,
    timeout: '10 min',
  }).implement(async () => {
    const dir = process.env.DRAIN_TOOLS_DIR!;
    writeFileSync(join(dir, 'started'), '');
    while (!existsSync(join(dir, 'release'))) await sleep(50);
    return { released: true };
  }),
];
