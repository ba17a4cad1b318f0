/**
 * `npm run api:report`: writes the API report of every public entry to `api/` (see test/support/api-report.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { apiReports } from './api-report';

const REPO = join(__dirname, '..', '..');

for (const { path, text } of apiReports()) {
  mkdirSync(dirname(join(REPO, path)), { recursive: true });
  writeFileSync(join(REPO, path), text);
  console.log(`wrote ${path}`);
}
