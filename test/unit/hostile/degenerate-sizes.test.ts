/**
 * Hand-made corpus, degenerate sizes: a Pi session of 1,000,000 empty entries (`{}`) and one
 * whose user message has 1,000,000 content blocks. Run as child processes with a heap cap (a
 * runaway allocation kills the child) and a watchdog (a hang fails). What must hold: exit 0,
 * `--json` of the documented shape, diagnostics listed one by one up to 1,000 and the rest
 * counted in one summary, and the million-block message analyzed (its rest past 1,024 elements is
 * one block). Times and peak memory are printed, not asserted (they are benchmark figures).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkJson, runCliProcess } from './harness.js';

const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'degenerate', timestamp: '2026-12-01T00:00:00.000Z', cwd: '/p' });
const ASSISTANT = (id: string, parentId: string) =>
  JSON.stringify({
    type: 'message',
    id,
    parentId,
    timestamp: '2026-12-01T00:00:01.000Z',
    message: {
      role: 'assistant',
      content: [{ type: 'text', text: 'ok' }],
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: 'claude-sonnet-4',
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
      stopReason: 'stop',
      timestamp: 1796083201000,
    },
  });

describe('hostile corpus: degenerate sizes', function () {
  this.timeout(300_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-hostile-size-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('1,000,000 empty entries: the first 1,000 reported one by one, the rest in one summary; bounded heap', async () => {
    const file = join(dir, 'empty.jsonl');
    writeFileSync(file, `${HEADER}\n${'{}\n'.repeat(1_000_000)}`);
    const r = await runCliProcess(['analyze', '--json', '--no-cache', file], { timeoutMs: 180_000, heapMb: 768 });
    assert.ok(!r.timedOut, 'hang');
    const s = checkJson(r, '1,000,000 empty entries').sessions[0];
    assert.equal(s.diagnostics.length, 1001);
    assert.equal(s.diagnostics[0].line, 2);
    assert.match(s.diagnostics[0].message, /^\(no type\) entry without a valid id\/parentId \(.+\); skipped$/);
    assert.deepEqual(s.diagnostics[1000], { file, line: 1002, severity: 'error', message: '999000 more problems in this file, lines 1002–1000001, not listed one by one (the first 1000 diagnostics of the session are)' });
    console.log(`      1,000,000 empty entries: ${Math.round(r.ms)} ms, peak RSS ${r.peakKb === null ? '?' : Math.round(r.peakKb / 1024)} MB`);
  });

  it('one user message with 1,000,000 content blocks: both requests analyzed; bounded heap', async () => {
    const file = join(dir, 'blocks.jsonl');
    const blocks = `[${Array(1_000_000).fill('{"type":"text","text":"x"}').join(',')}]`;
    const user = `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-12-01T00:00:00.500Z","message":{"role":"user","content":${blocks},"timestamp":1796083200500}}`;
    const again = '{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-12-01T00:00:02.000Z","message":{"role":"user","content":"again","timestamp":1796083202000}}';
    writeFileSync(file, [HEADER, user, ASSISTANT('a1', 'u1'), again, ASSISTANT('a2', 'u2')].join('\n') + '\n');
    const r = await runCliProcess(['analyze', '--json', '--no-cache', file], { timeoutMs: 180_000, heapMb: 768 });
    assert.ok(!r.timedOut, 'hang');
    const s = checkJson(r, '1,000,000 blocks').sessions[0];
    assert.deepEqual(s.requests.map((q) => q.line), [3, 5]);
    assert.deepEqual(s.diagnostics, []);
    console.log(`      1,000,000 content blocks: ${Math.round(r.ms)} ms, peak RSS ${r.peakKb === null ? '?' : Math.round(r.peakKb / 1024)} MB`);
  });
});
