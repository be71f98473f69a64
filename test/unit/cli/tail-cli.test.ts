/**
 * The persisted tail through the CLI (src/cli/main.ts + src/cache/tail.ts): `analyze --json` on a
 * Pi session saves a continuation state with its cache entries; after an append, a new run
 * continues from it (only the appended lines read) and prints exactly what `--no-cache` prints;
 * a corrupt state is ignored and rewritten. The session is long enough (4,084 requests) for its
 * token model to be fixed (CALIBRATION_LIMIT), as in real long sessions.
 */
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tail from '../../../src/cache/tail.js';
import { analyzeRefCached, analyzeRefUncached } from '../../../src/cache/results.js';
import { analyzeSession } from '../../../src/core/analyze.js';
import { defaultRules } from '../../../src/core/rules.js';
import { piRef } from '../../../src/hosts/pi/discover.js';
import { openRef, type SessionRef } from '../../../src/hosts/registry.js';
import { sessionReport } from '../../../src/report/json.js';
import { attachPhux } from '../../../src/report/phux.js';
import { main } from '../../../src/cli/main.js';
import { oneMoreRequest, writeSession } from '../../../scripts/bench/corpus.js';

describe('persisted tail through the CLI (analyze --json on a grown Pi session)', function () {
  this.timeout(300_000);
  let dir: string;
  let saved: { cache?: string; state?: string };
  let big: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-tail-cli-'));
    saved = { cache: process.env.XDG_CACHE_HOME, state: process.env.XDG_STATE_HOME };
    process.env.XDG_CACHE_HOME = join(dir, 'xdg');
    process.env.XDG_STATE_HOME = join(dir, 'state'); // no capture folders
    big = join(dir, 'in', 'big.jsonl');
    mkdirSync(join(dir, 'in'));
    const w = await writeSession(big, { bytes: 10_000_000, seed: 99, id: '019a0bbb-0000-7000-8000-000000000100', cwd: '/home/dev/big', startMs: Date.UTC(2026, 10, 20) });
    assert.equal(w.requests, 4084);
    // A recording with phux context messages beside it (not grown: its output entry hits).
    cpSync('test/fixtures/pi/main', join(dir, 'in', 'main'), { recursive: true });
  });
  after(() => {
    for (const [k, v] of [['XDG_CACHE_HOME', saved.cache], ['XDG_STATE_HOME', saved.state]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const run = async (...args: string[]) => {
    const out: string[] = [];
    const code = await main(['analyze', '--json', ...args], (s) => out.push(s), () => {}, process.cwd());
    return { code, text: `${out.join('\n')}\n` };
  };
  const states = () => readdirSync(join(dir, 'xdg', 'prefix-lens', 'v2')).filter((f) => f.endsWith('.tail'));

  it('saves a state, continues from it after appends (same bytes as --no-cache), and ignores a corrupt one', async () => {
    const input = join(dir, 'in');
    const first = await run(input);
    assert.equal(first.code, 0);
    assert.equal(first.text, (await run('--no-cache', input)).text);
    // Two states: the generated session's and the recording's (its phux context stream included).
    assert.equal(states().length, 2);
    // Bounded: the written breakpoint entries kept are those still in the cache lifetime's reach
    // (core/analyze.ts gone), not one per Anthropic request of the session.
    const bigFirst = states()
      .map((f) => tail.parseTail(readFileSync(join(dir, 'xdg', 'prefix-lens', 'v2', f)))!)
      .find((s) => s.identity.key.endsWith('big.jsonl'))!;
    assert.deepEqual(bigFirst.judge.lineages.map((l) => [l.key, l.written.length]), [
      ['anthropic|claude-sonnet-4-5|', 26],
      ['deepseek|deepseek-chat|', 0],
      ['openai|gpt-5|019a0bbb-0000-7000-8000-000000000100', 0],
    ]);
    const n0 = tail.continuedRuns;
    for (let i = 0; i < 2; i++) {
      appendFileSync(big, oneMoreRequest(big, 10 + i));
      const later = await run(input);
      assert.equal(tail.continuedRuns, n0 + i + 1, `append ${i + 1} continued (${tail.lastMiss})`);
      const full = await run('--no-cache', input);
      assert.equal(later.text, full.text);
      assert.equal(later.code, full.code);
      assert.match(later.text, new RegExp(`"responseId": "bench-appended-${10 + i}"`));
    }
    // A corrupt state: not trusted, the grown session read in full, a valid state written again.
    const bigState = states().find((f) => readFileSync(join(dir, 'xdg', 'prefix-lens', 'v2', f), 'utf8').includes('"bench-appended-11"'))!;
    const file = join(dir, 'xdg', 'prefix-lens', 'v2', bigState);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 5000));
    appendFileSync(big, oneMoreRequest(big, 20));
    const n1 = tail.continuedRuns;
    const after = await run(input);
    assert.equal(tail.continuedRuns, n1, 'not continued from a corrupt state');
    assert.equal(after.text, (await run('--no-cache', input)).text);
    assert.ok(tail.parseTail(readFileSync(file)), 'rewritten');
    // And continued again from the rewritten one.
    appendFileSync(big, oneMoreRequest(big, 21));
    const again = await run(input);
    assert.equal(tail.continuedRuns, n1 + 1);
    assert.equal(again.text, (await run('--no-cache', input)).text);
  });

  it('a branch back to an early entry, a model switch and a compaction appended: continued (the entry tree read again), same bytes as --no-cache', async () => {
    const input = join(dir, 'in');
    await run(input);
    const lines = () => readFileSync(big, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const lastId = () => lines().at(-1)!.id as string;
    const at = (n: number) => new Date(Date.parse('2027-02-01T00:00:00Z') + n * 1000).toISOString();
    const user = (id: string, parentId: string, n: number) => ({ type: 'message', id, parentId, timestamp: at(n), message: { role: 'user', content: [{ type: 'text', text: `question ${id}?` }], timestamp: Date.parse(at(n)) } });
    const answer = (id: string, parentId: string, n: number, model?: { provider: string; api: string; model: string }) => {
      const a = structuredClone(lines().reverse().find((e) => e.type === 'message' && e.message.role === 'assistant' && !e.message.errorMessage)!);
      Object.assign(a, { id, parentId, timestamp: at(n + 1) });
      Object.assign(a.message, { timestamp: Date.parse(at(n)) + 900, responseId: `tail-${id}`, content: [{ type: 'text', text: `answer ${id}.` }], ...(model ?? {}) });
      return a;
    };
    const early = lines()[12].id as string;
    const main = { provider: 'anthropic', api: 'anthropic-messages', model: 'claude-sonnet-4-5' };
    const appends: Array<[string, Array<Record<string, unknown>>]> = [
      // Back to an entry thousands of entries before the last (Pi's /tree): its context is that entry's path.
      ['branch', [{ type: 'branch_summary', id: 'tail-b', parentId: early, timestamp: at(1), fromId: lastId(), summary: 'went back' }, user('tail-b-u', 'tail-b', 2), answer('tail-b-a', 'tail-b-u', 3)]],
      // Another provider, API and model: the path encoded for it (its lineage is new: the token model adds a base).
      ['model switch', [{ type: 'model_change', id: 'tail-m', parentId: 'tail-b-a', timestamp: at(4), provider: 'openai', modelId: 'gpt-5.1-codex' }, user('tail-m-u', 'tail-m', 5), answer('tail-m-a', 'tail-m-u', 6, { provider: 'openai', api: 'openai-responses', model: 'gpt-5.1-codex' })]],
      // Back to the session's main model (a young lineage's second point would move its base: see the README), compacted.
      ['compaction', [{ type: 'compaction', id: 'tail-c', parentId: 'tail-m-a', timestamp: at(7), summary: 'compacted', firstKeptEntryId: 'tail-m-u', tokensBefore: 1000 }, user('tail-c-u', 'tail-c', 8), answer('tail-c-a', 'tail-c-u', 9, main)]],
    ];
    for (const [what, entries] of appends) {
      appendFileSync(big, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
      const [c0, t0] = [tail.continuedRuns, tail.treeRuns];
      const later = await run(input);
      assert.deepEqual([tail.continuedRuns - c0, tail.treeRuns - t0], [1, 1], `${what}: continued with the entry tree (${tail.lastMiss})`);
      const full = await run('--no-cache', input);
      assert.equal(later.text, full.text, what);
      assert.match(later.text, new RegExp(`"responseId": "tail-${entries.at(-1)!.id}"`), what);
    }
    // A plain append after them continues from the last entry alone again.
    appendFileSync(big, oneMoreRequest(big, 40));
    const [c0, t0] = [tail.continuedRuns, tail.treeRuns];
    const later = await run(input);
    assert.deepEqual([tail.continuedRuns - c0, tail.treeRuns - t0], [1, 0], `plain append (${tail.lastMiss})`);
    assert.equal(later.text, (await run('--no-cache', input)).text);
  });

  it('text mode and the result cache (the extension worker\'s call) continue too, from the result entry and the state', async () => {
    const input = join(dir, 'in');
    const text = async (...args: string[]) => {
      const out: string[] = [];
      const code = await main(['analyze', ...args], (s) => out.push(s), () => {}, process.cwd());
      return { code, text: out.join('\n') };
    };
    // The first test's last run was a `--json` continuation: it wrote the output entry and the
    // state, not the result entry. The file has not changed since: a text run takes the reports
    // from the output entry (results.ts lookup), a hit, nothing continued or stored.
    const v2 = join(dir, 'xdg', 'prefix-lens', 'v2');
    const resultEntries = () => readdirSync(v2).filter((f) => f.endsWith('.json')).length;
    const n00 = tail.continuedRuns;
    const entries0 = resultEntries();
    const afterJson = await text(input);
    assert.equal(tail.continuedRuns, n00, 'a hit, not a continuation');
    assert.equal(resultEntries(), entries0, 'a hit stores nothing');
    assert.equal(afterJson.text, (await text('--no-cache', input)).text);
    // A text run after an append: no result entry for the state, continued from the output entry's requests.
    appendFileSync(big, oneMoreRequest(big, 29));
    const n01 = tail.continuedRuns;
    const afterAppend = await text(input);
    assert.equal(tail.continuedRuns, n01 + 1, `text mode after a --json run continued (${tail.lastMiss})`);
    assert.equal(afterAppend.text, (await text('--no-cache', input)).text);
    // A text run after an append: the result entry missed, continued from the state saved with it.
    appendFileSync(big, oneMoreRequest(big, 30));
    const n0 = tail.continuedRuns;
    const later = await text(input);
    assert.equal(tail.continuedRuns, n0 + 1, `text mode continued (${tail.lastMiss})`);
    assert.equal(later.text, (await text('--no-cache', input)).text);
    // The extension's call: its own analysis function, declared plain (continuable), its rules.
    const cacheDir = join(dir, 'ext-cache');
    const ref = (await piRef(big, 'named')) as SessionRef;
    const env = { ...process.env };
    const analyze = async (r: SessionRef, rules: typeof defaultRules) => (await openRef(r, { env })).map((s) => attachPhux(sessionReport(analyzeSession(s, rules), rules), s));
    const opts = { cacheDir, rules: defaultRules, analyze, continuable: { env } };
    await analyzeRefCached(ref, opts);
    appendFileSync(big, oneMoreRequest(big, 31));
    const n1 = tail.continuedRuns;
    const grown = await analyzeRefCached((await piRef(big, 'named')) as SessionRef, opts);
    assert.equal(tail.continuedRuns, n1 + 1, `the result cache continued (${tail.lastMiss})`);
    assert.equal(JSON.stringify(grown), JSON.stringify(await analyzeRefUncached((await piRef(big, 'named')) as SessionRef)));
    // Without `continuable`, a caller's own analysis is never replaced: no state.
    const other = join(dir, 'other-cache');
    await analyzeRefCached(ref, { cacheDir: other, analyze });
    assert.deepEqual(readdirSync(join(other, 'v2')).filter((f) => f.endsWith('.tail')), []);
  });
});
