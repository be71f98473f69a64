/**
 * transformAssistant's fast path (the message's own model, no block dropped: its content as it
 * is) must give what the block-by-block transform (transformBlocks) gives: checked on every
 * assistant message of the recordings and of generated sessions, for its own model and for every
 * other context seen, and on thinking variants of each.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { recordedPiLines } from './helpers.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transformAssistant, transformBlocks, type EncodeContext } from '../../../src/hosts/pi/normalize.js';
import type { AssistantMessage } from '../../../src/hosts/pi/schema.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

function assistantsOf(text: string): AssistantMessage[] {
  const out: AssistantMessage[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as { type: string; message?: { role?: string } };
    if (e.type === 'message' && e.message?.role === 'assistant') out.push(e.message as AssistantMessage);
  }
  return out;
}

/** The message with a thinking block of each kind added in front (blank, unsigned, signed, redacted). */
function variants(m: AssistantMessage): AssistantMessage[] {
  const thinking = [
    { type: 'thinking', thinking: '' },
    { type: 'thinking', thinking: '  \n' },
    { type: 'thinking', thinking: 'plan' },
    { type: 'thinking', thinking: '', thinkingSignature: 'sig' },
    { type: 'thinking', thinking: '', redacted: true, thinkingSignature: 'opaque' },
  ];
  return [m, ...thinking.map((t) => ({ ...m, content: [t, ...m.content] }) as AssistantMessage)];
}

function check(messages: AssistantMessage[]): number {
  const ctxs = new Map<string, EncodeContext>();
  for (const m of messages) ctxs.set(`${m.api} ${m.provider} ${m.model}`, { api: m.api, provider: m.provider, model: m.model });
  let fast = 0;
  for (const base of messages) {
    for (const m of variants(base)) {
      for (const ctx of [{ api: m.api, provider: m.provider, model: m.model }, ...ctxs.values()]) {
        const got = transformAssistant(m, ctx);
        const want = transformBlocks(m, ctx);
        assert.deepStrictEqual(got, want);
        if (got.content !== m.content) continue;
        // The fast path: the block-by-block transform keeps the very same block objects.
        got.content.forEach((b, i) => assert.equal(b, want.content[i], 'the same block objects'));
        fast++;
      }
    }
  }
  return fast;
}

describe('pi assistant transform fast path', () => {
  it('agrees with the block-by-block transform on every recorded assistant message', () => {
    const messages = assistantsOf(recordedPiLines().join('\n'));
    assert.ok(messages.length >= 15, `${messages.length} assistant messages`);
    assert.ok(check(messages) > messages.length, 'the fast path was taken');
  });

  it('and on generated sessions (tool calls, errors, thinking)', async function () {
    this.timeout(60_000);
    const dir = await mkdtemp(join(tmpdir(), 'prefix-lens-transform-'));
    try {
      const messages: AssistantMessage[] = [];
      for (let i = 0; i < 3; i++) {
        const file = join(dir, `s${i}.jsonl`);
        await writeSession(file, { bytes: 80_000, seed: 900 + i, id: `019a0900-0000-7000-8000-${String(i).padStart(12, '0')}`, cwd: '/home/dev/p', startMs: Date.UTC(2026, 10, 3) });
        messages.push(...assistantsOf(await readFile(file, 'utf8')));
      }
      assert.ok(check(messages) > messages.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
