/**
 * A reconstructed request's read that stops inside the opaque head is a head break only when the
 * live entries would have let it read past that point. Generated Pi session on claude-haiku-4-5
 * (4,096-token minimum): the head (~1.5k tokens) is too short for an entry of its own, and #2
 * appends 25 tool calls and results (50 blocks) after #1's entry, beyond the provider's 20-block
 * lookback: nothing is readable (expected ~0) and the provider read 0. That read is explained; the
 * head did not change. (Before: a `head` break, `system-changed?`.)
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { cleanup, tempDir, writeJsonl } from '../pi/helpers.js';

function session(): object[] {
  let t = Date.parse('2026-11-29T10:00:00.000Z');
  const iso = () => new Date((t += 1000)).toISOString();
  const o = { api: 'anthropic-messages', provider: 'anthropic', model: 'claude-haiku-4-5' };
  const usage = (cacheWrite: number) => ({ input: 0, output: 5, cacheRead: 0, cacheWrite, totalTokens: cacheWrite + 5 });
  const lines: object[] = [
    { type: 'session', version: 3, id: '01a00000-0000-7000-8000-0000000000aa', timestamp: iso(), cwd: '/work/demo' },
    { type: 'model_change', id: 'm1', parentId: null, timestamp: iso(), provider: 'anthropic', modelId: 'claude-haiku-4-5' },
    { type: 'message', id: 'u1', parentId: 'm1', timestamp: iso(), message: { role: 'user', content: [{ type: 'text', text: 'Please read these files. ' + 'context '.repeat(2200) }], timestamp: t } },
  ];
  const calls = Array.from({ length: 25 }, (_, i) => ({ type: 'toolCall', id: `call_${i}`, name: 'read', arguments: { path: `f${i}.txt` } }));
  lines.push({ type: 'message', id: 'a1', parentId: 'u1', timestamp: iso(), message: { role: 'assistant', content: calls, ...o, usage: usage(5200), stopReason: 'toolUse', timestamp: t } });
  let parent = 'a1';
  for (let i = 0; i < 25; i++) {
    lines.push({ type: 'message', id: `r${i}`, parentId: parent, timestamp: iso(), message: { role: 'toolResult', toolCallId: `call_${i}`, toolName: 'read', content: [{ type: 'text', text: `contents of f${i}.txt` }], isError: false, timestamp: t } });
    parent = `r${i}`;
  }
  lines.push({ type: 'message', id: 'a2', parentId: parent, timestamp: iso(), message: { role: 'assistant', content: [{ type: 'text', text: 'Read them all.' }], ...o, usage: usage(5900), stopReason: 'stop', timestamp: t } });
  return lines;
}

describe('a read that stops inside the opaque head', () => {
  it('is no head break when nothing was readable (expected ~0, read 0): a hit whose entry lay beyond the lookback', async () => {
    const dir = await tempDir();
    try {
      const file = join(dir, 'lookback.jsonl');
      await writeJsonl(file, session());
      const a = analyzeSession(await readPiSession(file)).requests;
      assert.deepEqual(a.map((r) => [r.verdict, r.break?.segment ?? null, r.observedRead, r.expectedRead]), [['cold', null, 0, 0], ['hit', null, 0, 0]]);
      assert.deepEqual(a[1].causes.map((c) => [c.kind, c.certainty]), [['lookback-exceeded', 'certain']]);
      assert.match(a[1].causes[0].detail, /is 50 blocks past the entry #1 wrote at messages\[0\]\.content\[0\] \(~5200 tokens\); the provider looks back 20 blocks$/);
      // What the entry held and the breakpoint could not reach is still lost.
      assert.equal(a[1].lostTokens, 5200);
    } finally {
      await cleanup(dir);
    }
  });
});
