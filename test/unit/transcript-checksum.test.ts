import type { TranscriptMessage } from '../../src/contract/model-types';
import { transcriptChecksum } from '../../src/contract/transcript-checksum';

/*
 * A chained turn recorded in a history carries the checksum its worker computed; a workflow replaying that
 * history takes the turn only if it computes the same (docs/fast-path.md, "Chained turns"). So the checksum of a
 * given delta may never change: these values were computed by the first implementation (2026-12-03).
 */

const unicodeTurn = [
  {
    role: 'assistant',
    content: 'é — ünïcode ✓ 𝄞',
    toolCalls: [{ id: 'c1', name: 'ledger_step', arguments: { step: 3 } }],
  },
  { role: 'tool', toolCallId: 'c1', name: 'ledger_step', content: '{"ok":true}' },
] as unknown as TranscriptMessage[];

test('the checksum of an empty delta is the one recorded histories carry', () => {
  expect(transcriptChecksum(0, [])).toBe('7033477dfaa1ebd8');
});

test('the checksum of a user message at an offset is the one recorded histories carry', () => {
  expect(transcriptChecksum(3, [{ role: 'user', content: 'Add 2 and 3.' }])).toBe('5e7b181db0600e1c');
});

test('the checksum of a turn with calls and characters beyond ASCII is the one recorded histories carry', () => {
  expect(transcriptChecksum(12, unicodeTurn)).toBe('39b7f55477033cac');
});

test('another position of the same messages gives another checksum', () => {
  expect(transcriptChecksum(13, unicodeTurn)).not.toBe(transcriptChecksum(12, unicodeTurn));
});
