/**
 * Re-billed tokens of a break (core/rebill.ts): what the matched entry would have served had the
 * item changed at the break been sent as before, less the read — not the new tokens the request
 * sends after the change. Recordings: Claude Code's /compact (test/fixtures/claude-code), Pi's
 * AGENTS.md edit (test/fixtures/pi/long); generated chains for the alignment rules.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { chainOf } from '../../../src/core/chain.js';
import type { Block, Segment } from '../../../src/core/model.js';
import { resumedDepth } from '../../../src/core/rebill.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { headTokens } from '../groundtruth/provider-tokens.js';

const CC = 'test/fixtures/claude-code';
const CC_MAIN = join(CC, 'claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl');
const PI_LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--/2026-12-01T09-25-41-787Z_01a230ec-991a-7497-9a50-b9f4f6517541.jsonl';

const enc = new TextEncoder();
const block = (segment: Segment, item: number, text: string): Block => ({ segment, item, path: `${segment}[${item}]`, bytes: enc.encode(text) });
const chain = (...blocks: Block[]) => chainOf(blocks)!;

describe('re-billed tokens of a break', () => {
  it('Claude Code /compact (#9; wire #10): the tools and system blocks after the billing header, 19,213 tokens (the provider counts 19,042), not the 22,504-token prompt', async () => {
    const [recon] = await readClaudeSession(CC_MAIN);
    const [wire] = await readClaudeSession(CC_MAIN, { requestsDir: join(CC, 'requests') });
    const r = analyzeSession(recon).requests[8];
    const w = analyzeSession(wire).requests[9];
    for (const x of [r, w]) {
      assert.deepEqual([x.verdict, x.break!.segment, x.break!.blockIndex, x.observedRead, x.request.usage!.cacheWrite, x.lostTokens], ['break', 'system', 0, 0, 22504, 19213]);
    }
    // What the provider would have read had system[0] stayed: its count of the shared head, the
    // same in body 009 (the compared request) and 010; the history after it is the summary.
    const body = (n: string) => JSON.parse(readFileSync(join(CC, 'requests', `${n}-anthropic-messages.body.json`), 'utf8')) as Parameters<typeof headTokens>[0];
    assert.deepEqual([headTokens(body('009')), headTokens(body('010'))], [19042, 19042]);
    assert.ok(Math.abs(19213 - 19042) / 19042 < 0.01);
  });

  it('Pi long: the AGENTS.md edit (#4) re-bills the whole conversation after it, #3\'s entry (1,581 read + 35 written)', async () => {
    const a = analyzeSession(await readPiSession(PI_LONG, { requestsDir: 'test/fixtures/pi/long/requests' }));
    const r = a.requests[3];
    assert.deepEqual([r.verdict, r.break!.segment, r.observedRead, r.lostTokens], ['break', 'system', 0, 1616]);
    const u = a.requests[2].request.usage!;
    assert.equal(u.cacheRead! + u.cacheWrite!, 1616);
  });

  it('a break re-bills at least what the cache held before the change and the request did not read (expected − observed), on a generated Pi session', async function () {
    this.timeout(60_000);
    const { writeSession } = await import('../../../scripts/bench/corpus.js');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-rebill-'));
    try {
      const file = join(dir, 's.jsonl');
      await writeSession(file, { bytes: 2_000_000, seed: 7, id: '019a0000-0000-7000-8000-00000000f100', cwd: '/home/dev/f', startMs: Date.UTC(2026, 10, 5) });
      const a = analyzeSession(await readPiSession(file));
      const breaks = a.requests.filter((r) => r.verdict === 'break' && r.break!.segment !== 'head');
      // #346, #688, #700 read nothing of an entry the judge expected to serve: all of it is re-billed (it was 6,561 / 63,296 / 65,216).
      assert.deepEqual([346, 688, 700].map((i) => [a.requests[i - 1].expectedRead, a.requests[i - 1].observedRead, a.requests[i - 1].lostTokens]), [[48417, 0, 48417], [70656, 0, 70656], [73664, 0, 73664]]);
      const paid = (r: (typeof breaks)[number]) => r.request.usage!.uncached! + r.request.usage!.cacheWrite!;
      assert.deepEqual(breaks.filter((r) => r.lostTokens < Math.min((r.expectedRead ?? 0) - (r.observedRead ?? 0), paid(r))).map((r) => r.request.index), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('resumedDepth: the entry depth the request shares once the changed items are set aside', () => {
    const S = block('system', 0, 'You are a coding agent.');
    const T0 = block('tools', 0, '{"name":"read"}');
    const T1 = block('tools', 1, '{"name":"bash"}');
    const M = (i: number, t: string) => block('messages', i, t);
    const entry = chain(T0, T1, S, M(0, 'hello'), M(1, 'hi'), M(2, 'read a.txt'));

    it('an item edited in place: the rest of the entry', () => {
      const req = chain(T0, T1, block('system', 0, 'You are a coding agent. Today is Monday.'), M(0, 'hello'), M(1, 'hi'), M(2, 'read a.txt'), M(3, 'ok'));
      assert.equal(resumedDepth(entry, req, 2), 6);
    });

    it('an item inserted (a tool added) or removed (a tool dropped): the blocks after it still align', () => {
      const added = chain(T0, block('tools', 1, '{"name":"grep"}'), block('tools', 2, '{"name":"bash"}'), S, M(0, 'hello'), M(1, 'hi'), M(2, 'read a.txt'));
      assert.equal(resumedDepth(entry, added, 1), 6);
      const dropped = chain(T0, S, M(0, 'hello'), M(1, 'hi'), M(2, 'read a.txt'));
      assert.equal(resumedDepth(entry, dropped, 1), 6);
    });

    it('two separate edits (the system text and a new tool after it, DeepSeek order): both set aside', () => {
      const e = chain(S, T0, M(0, 'hello'), M(1, 'hi'));
      const req = chain(block('system', 0, 'You are a coding agent. Grep is active.'), T0, block('tools', 1, '{"name":"grep"}'), M(0, 'hello'), M(1, 'hi'));
      assert.equal(resumedDepth(e, req, 0), 4);
    });

    it('a change over several tools or system items (two tools added, two system blocks edited): the blocks after them still align; two messages dropped end the run (a rewritten history)', () => {
      const S1 = block('system', 1, 'Be brief.');
      const e = chain(T0, T1, S, S1, M(0, 'hello'), M(1, 'hi'), M(2, 'read a.txt'), M(3, 'done'));
      const twoTools = chain(T0, T1, block('tools', 2, '{"name":"mcp_a"}'), block('tools', 3, '{"name":"mcp_b"}'), S, S1, M(0, 'hello'), M(1, 'hi'), M(2, 'read a.txt'), M(3, 'done'));
      assert.equal(resumedDepth(e, twoTools, 2), 8);
      const twoSystem = chain(T0, T1, block('system', 0, 'You are a careful agent.'), block('system', 1, 'Be thorough.'), M(0, 'hello'), M(1, 'hi'), M(2, 'read a.txt'), M(3, 'done'));
      assert.equal(resumedDepth(e, twoSystem, 2), 8);
      const twoDropped = chain(T0, T1, S, S1, M(2, 'read a.txt'), M(3, 'done'));
      assert.equal(resumedDepth(e, twoDropped, 4), 4);
      // Three tools added and a system block edited: both set aside.
      const S0b = block('system', 0, 'You are a coding agent, v2.');
      const mixed = chain(T0, T1, block('tools', 2, '{"name":"a"}'), block('tools', 3, '{"name":"b"}'), block('tools', 4, '{"name":"c"}'), S0b, S1, M(0, 'hello'), M(1, 'hi'), M(2, 'read a.txt'), M(3, 'done'));
      assert.equal(resumedDepth(e, mixed, 2), 8);
    });

    it('a history replaced by a summary, or another branch: nothing past the change (the depth of the shared prefix)', () => {
      const compacted = chain(T0, T1, S, M(0, 'Summary of the conversation so far'), M(1, 'next question'));
      assert.equal(resumedDepth(entry, compacted, 3), 3);
      const branch = chain(T0, T1, S, M(0, 'hello'), M(1, 'hi'), M(2, 'A summary of another branch'), M(3, 'new prompt'));
      assert.equal(resumedDepth(entry, branch, 5), 5);
    });
  });
});
