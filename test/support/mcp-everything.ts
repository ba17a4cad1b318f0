import { spawn, type ChildProcess } from 'node:child_process';
import { findFreePort, isPortOpen } from '../../src/dev-server/free-port';
import { waitFor } from './wait-for';

/** The entry script of `@modelcontextprotocol/server-everything` (run with this Node, no npx). */
export const EVERYTHING_BIN = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** The stdio configuration of server-everything. */
export function everythingStdio(trust: 'trusted' | 'untrusted' = 'trusted') {
  return { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'], trust };
}

/** A server-everything process serving Streamable HTTP on a free port of 127.0.0.1. */
export interface EverythingHttp {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `mcp-server-everything streamableHttp` (port in `PORT`) and waits until it accepts connections. */
export async function startEverythingHttp(): Promise<EverythingHttp> {
  const port = await findFreePort();
  const child = spawn(process.execPath, [EVERYTHING_BIN, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  await waitFor(
    `server-everything on port ${port} (${stderr})`,
    async () => child.exitCode === null && (await isPortOpen(port)),
  );
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
