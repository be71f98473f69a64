/**
 * The analyzer on the recorded Pi scenarios (test/fixtures/pi, real pi 0.73.1; usage synthetic):
 * verdicts, break points, causes, usage sums and costs, exact values from the recordings.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession, type SessionAnalysis } from '../../../src/core/analyze.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';

async function analyze(scenario: string, wire: boolean): Promise<SessionAnalysis> {
  const base = join('test/fixtures/pi', scenario, 'agent', 'sessions');
  const sub = readdirSync(base)[0];
  const file = join(base, sub, readdirSync(join(base, sub)).find((f) => f.endsWith('.jsonl'))!);
  return analyzeSession(await readPiSession(file, wire ? { requestsDir: join('test/fixtures/pi', scenario, 'requests') } : {}));
}

const breaks = (a: SessionAnalysis) =>
  a.requests.filter((r) => r.break).map((r) => [r.request.index, r.break!.segment, r.break!.blockIndex, r.break!.path, r.causes.map((c) => c.kind).join('+')]);

describe('analysis of the recorded Pi main scenario', () => {
  it('reconstructed: 13 agent requests with their verdicts', async () => {
    const a = await analyze('main', false);
    assert.deepEqual(
      a.requests.map((r) => r.verdict),
      ['cold', 'hit', 'hit', 'hit', 'model-switch', 'hit', 'hit', 'hit', 'break', 'break', 'model-switch', 'hit', 'break'],
    );
  });

  it('reconstructed: the compaction request (#9, line 33) breaks at messages[0], the branch (#10, line 38) at messages[2]', async () => {
    const a = await analyze('main', false);
    assert.deepEqual(breaks(a), [
      [9, 'messages', 0, 'messages[0].content[0].text', 'history-rewritten'],
      [10, 'messages', 2, 'messages[2].content[0].text', 'history-rewritten'],
      [13, 'messages', 2, 'messages[3].content[0].text', 'history-rewritten'],
    ]);
    assert.match(a.requests[8].causes[0].detail, /^compaction/);
    assert.match(a.requests[9].causes[0].detail, /^branch/);
    // Pi kept its in-memory thinking level over the /tree navigation (the body says budget 16384):
    // no params change, only the branch.
    assert.equal(a.requests[9].causes.length, 1);
    // Back on gpt-5 after the detour: compared with its own lineage's last entry (#4).
    assert.equal(a.requests[12].matched, 4);
  });

  it('reconstructed: the thinking change (#8) is a possible params break the observed read contradicts', async () => {
    const a = await analyze('main', false);
    assert.equal(a.requests[7].verdict, 'hit');
    assert.deepEqual(a.requests[7].causes.map((c) => [c.kind, c.certainty]), [['params-changed', 'likely']]);
  });

  it('reconstructed: usage sums; the three breaks re-bill nothing', async () => {
    const a = await analyze('main', false);
    const t = a.totals;
    assert.deepEqual([t.uncached, t.cacheRead, t.cacheWrite, t.output], [5971, 19124, 4994, 198]);
    assert.equal(t.breaks, 3);
    // The compaction, the branch and the return to gpt-5 send new tokens after their change, nothing the cache held: 0 re-billed.
    assert.deepEqual(a.requests.filter((r) => r.verdict === 'break').map((r) => [r.request.index, r.lostTokens]), [[9, 0], [10, 0], [13, 0]]);
    assert.equal(t.lostTokens, 0);
    assert.equal(t.costUSD, 0);
  });

  it('wire: 16 requests including the three summaries, with byte offsets', async () => {
    const a = await analyze('main', true);
    assert.deepEqual(
      a.requests.map((r) => `${r.request.kind === 'agent' ? '' : 's:'}${r.verdict}`),
      ['cold', 'hit', 'hit', 'hit', 'model-switch', 'hit', 'hit', 'hit', 's:below-minimum', 's:below-minimum', 'break', 's:cold', 'break', 'model-switch', 'hit', 'break'],
    );
    const offsets = a.requests.filter((r) => r.break && r.request.kind === 'agent').map((r) => [r.request.index, r.break!.path, r.break!.byteOffset]);
    assert.deepEqual(offsets, [
      [11, 'messages[0].content[0].text', 90],
      [13, 'messages[2].content[0].text', 249],
      [16, 'messages[3].content[0].text', 3456],
    ]);
  });
});

describe('analysis of the recorded Pi long scenario (PI_CACHE_RETENTION=long)', () => {
  it('wire: the AGENTS.md edit (#4) is system-changed at the edited line', async () => {
    const a = await analyze('long', true);
    assert.deepEqual(a.requests.map((r) => r.verdict), ['cold', 'hit', 'hit', 'break', 'unknown', 'hit', 'model-switch', 'model-switch']);
    const r = a.requests[3];
    assert.deepEqual([r.break!.segment, r.break!.blockIndex, r.break!.path, r.break!.byteOffset], ['system', 0, 'system[0].text', 3316]);
    assert.equal(r.causes[0].kind, 'system-changed');
    assert.match(r.causes[0].detail, /line 38: Edited line: the system prompt changes now\./);
  });

  it('reconstructed: the same request breaks in the opaque head, as a likely system change', async () => {
    const a = await analyze('long', false);
    const r = a.requests[3];
    assert.equal(r.verdict, 'break');
    assert.equal(r.break!.segment, 'head');
    assert.deepEqual(r.causes.map((c) => [c.kind, c.certainty]), [['system-changed', 'likely']]);
  });

  it('the retry after the HTTP 500 has an identical prefix; the failed request writes no entry', async () => {
    for (const wire of [false, true]) {
      const a = await analyze('long', wire);
      const [failed, retry] = [a.requests[4], a.requests[5]];
      assert.ok(failed.request.error?.startsWith('500'));
      assert.equal(failed.prefixHash, retry.prefixHash);
      assert.equal(retry.verdict, 'hit');
      assert.equal(retry.matched, 4);
    }
  });

  it('1 h breakpoints in the bodies give the entries a 1 h lifetime', async () => {
    const a = await analyze('long', true);
    const marks = a.session.requests[0].tail!;
    let ttl = 0;
    for (let n: typeof marks | null = marks; n; n = n.prev) ttl = Math.max(ttl, n.block.breakpoint?.ttlSeconds ?? 0);
    assert.equal(ttl, 3600);
  });
});
