/**
 * A process for the SQLite durability test, run as `node --import tsx test/support/sqlite-killed-writer.ts
 * <file> <synchronous> <count>`: opens the SQLite key store with that `synchronous` mode, records `count`
 * keys (a claim and a completion each, and one insertIfAbsent; the completion and the insert made durable with
 * the next commit, as the engine writes a tool call's result and a model turn), prints `written`, and SIGKILLs
 * itself without closing the database, as a worker killed right after its commits would.
 */
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';

async function main(): Promise<void> {
  const [path, synchronous, count] = process.argv.slice(2);
  const store = new SqliteIdempotencyStore({ path: path!, synchronous: synchronous as 'FULL' | 'NORMAL' });
  for (let i = 0; i < Number(count); i++) {
    const claim = await store.begin(`tool/${i}`, 'fp', { owner: 'killed' });
    if (claim.state !== 'started') throw new Error(`tool/${i} was ${claim.state}`);
    await store.complete(`tool/${i}`, claim.token, { paid: i }, { durableWithNextCommit: true });
    await store.insertIfAbsent(`turn/${i}`, 'model-turn', { text: `turn ${i}` }, { durableWithNextCommit: true });
  }
  process.stdout.write('written\n', () => process.kill(process.pid, 'SIGKILL'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
