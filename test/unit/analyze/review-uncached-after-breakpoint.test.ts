/**
 * Explicit breakpoints (Anthropic): what a request leaves in the cache is its read + write, the
 * prompt through its deepest breakpoint; its uncached `input_tokens` come after it and are in no
 * entry (reference/providers.md §1.2). Taken as the whole prompt, an entry was as large as the
 * request's uncached tail made it, so the next request "should" have read tokens nobody cached.
 * Recordings: Claude Code's auto-compaction (test/fixtures/claude-code-autocompact: #2 reports
 * 170,000 uncached input tokens on top of 21,905 cached, and the compaction call #3 reads exactly
 * those 21,905) and PI-Desktop's "Parser review (Sonnet)" session (#2 writes 1,520 of a
 * 1,642-token prompt, #3 reads those 1,520).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { findSessions, openRef } from '../../../src/hosts/registry.js';
import { mainTranscript } from '../claude-code/helpers.js';

const AUTOCOMPACT = 'test/fixtures/claude-code-autocompact';

describe('review: uncached tokens after the last breakpoint are in no cache entry', () => {
  it('Claude Code auto-compaction, wire: the compaction call reads all #2 cached (21,905 tokens): a hit, not an unexplained miss of ~191,905', async () => {
    const [s] = await readClaudeSession(mainTranscript(AUTOCOMPACT), { requestsDir: join(AUTOCOMPACT, 'requests') });
    const a = analyzeSession(s);
    const r = a.requests.map((x) => [x.request.index, x.request.kind, x.verdict, x.expectedRead, x.observedRead, x.lostTokens]);
    assert.deepEqual(r, [
      [1, 'agent', 'cold', 0, 0, 0],
      [2, 'agent', 'hit', 21846, 21846, 0],
      [3, 'summary', 'hit', 21905, 21905, 0],
      // The break after the compaction re-bills what the cache would have served had the billing
      // header stayed: #3's entry through the system breakpoint (the summary after it is new).
      [4, 'agent', 'break', 0, 0, 19474],
      [5, 'agent', 'hit', 22183, 22183, 0],
    ]);
    assert.deepEqual(s.requests[1].usage, { uncached: 170000, cacheRead: 21846, cacheWrite: 59, output: 11 });
    assert.equal(a.totals.lostTokens, 19474);
  });

  it('Claude Code auto-compaction, from the transcript: the break at #3 re-bills #2\'s entry through the system breakpoint (19,474 tokens), not its 191,905-token prompt', async () => {
    const [s] = await readClaudeSession(mainTranscript(AUTOCOMPACT));
    const a = analyzeSession(s);
    assert.deepEqual(a.requests.map((x) => [x.request.index, x.verdict, x.lostTokens]), [[1, 'cold', 0], [2, 'hit', 0], [3, 'break', 19474], [4, 'hit', 0]]);
    assert.deepEqual([a.requests[2].break?.segment, a.requests[2].break?.blockIndex], ['system', 0]);
  });

  it('PI-Desktop on Sonnet: #3 is expected to read the 1,520 tokens #2 wrote (its 122 uncached ones were never cached)', async () => {
    const refs = (await findSessions('test/fixtures/pi-desktop/home')).filter((r) => r.host === 'pi-desktop');
    const sessions = (await Promise.all(refs.map((r) => openRef(r, { env: {} })))).flat();
    const s = sessions.find((x) => x.title === 'Parser review (Sonnet)')!;
    const a = analyzeSession(s);
    assert.deepEqual(s.requests[1].usage, { uncached: 122, cacheRead: 0, cacheWrite: 1520, output: 8 });
    assert.deepEqual([a.requests[2].verdict, a.requests[2].expectedRead, a.requests[2].observedRead, a.requests[2].lostTokens], ['hit', 1520, 1520, 0]);
  });
});
