import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeRefCached, analyzeRefUncached, defaultCacheDir, entryFile } from '../../../src/cache/results.js';
import { defaultRules } from '../../../src/core/rules.js';
import { findSessions, releaseReaders, type SessionRef } from '../../../src/hosts/registry.js';

const LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';

describe('result cache', () => {
  let dir: string;
  let cacheDir: string;
  let file: string;
  const results: string[] = [];
  const onResult = (k: 'hit' | 'miss') => results.push(k);
  const ref = async (): Promise<SessionRef> => (await findSessions(file))[0];
  const run = async (r?: SessionRef, rules = defaultRules) => analyzeRefCached(r ?? (await ref()), { cacheDir, onResult, rules });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cache-'));
    cacheDir = join(dir, 'cache');
    file = join(dir, 'session.jsonl');
    copyFileSync(join(LONG, readdirSync(LONG)[0]), file);
    results.length = 0;
  });
  afterEach(() => {
    releaseReaders();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lives in $XDG_CACHE_HOME/prefix-lens, else ~/.cache/prefix-lens (a relative XDG value is ignored)', () => {
    assert.equal(defaultCacheDir({ XDG_CACHE_HOME: '/x/c' }, '/h'), '/x/c/prefix-lens');
    assert.equal(defaultCacheDir({}, '/h'), '/h/.cache/prefix-lens');
    assert.equal(defaultCacheDir({ XDG_CACHE_HOME: 'rel' }, '/h'), '/h/.cache/prefix-lens');
  });

  it('an unchanged file is a hit with the same reports as a fresh analysis', async () => {
    const first = await run();
    const second = await run();
    assert.deepEqual(results, ['miss', 'hit']);
    assert.deepEqual(second, first);
    assert.deepEqual(second, await analyzeRefUncached(await ref()));
    assert.equal(second[0].requests.length, 8);
  });

  it('a grown file misses and gets the new request', async () => {
    await run();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const lastAssistant = lines.filter((l) => l.includes('"role":"assistant"')).pop()!;
    const copy = JSON.parse(lastAssistant) as { id: string; parentId: string };
    copy.parentId = copy.id;
    copy.id = 'ffff0001';
    appendFileSync(file, `${JSON.stringify(copy)}\n`);
    const grown = await run();
    assert.deepEqual(results, ['miss', 'miss']);
    assert.equal(grown[0].requests.length, 9);
  });

  it('a rewrite that keeps size and mtime misses on the head/tail content check', async () => {
    await run();
    const st = statSync(file);
    const text = readFileSync(file, 'utf8');
    // Same length: one digit of the header timestamp changed.
    writeFileSync(file, text.replace('"timestamp":"2026-11-30T08:58:43', '"timestamp":"2026-11-30T08:58:44'));
    utimesSync(file, st.atime, st.mtime);
    assert.equal(statSync(file).size, st.size);
    await run();
    assert.deepEqual(results, ['miss', 'miss']);
  });

  it('a corrupt, cut-short or foreign entry is ignored and rewritten', async () => {
    const r = await ref();
    const entry = entryFile(cacheDir, r.key);
    await run(r);
    const good = readFileSync(entry, 'utf8');
    const [head, ...rest] = good.trimEnd().split('\n');
    writeFileSync(entry, '{"format":"prefix-lens-result-cache","reports":[');
    await run(r); // corrupt: miss, rewritten
    assert.equal(readFileSync(entry, 'utf8'), good);
    await run(r); // hit
    writeFileSync(entry, JSON.stringify({ ...JSON.parse(head), key: '/somewhere/else.jsonl' }) + '\n' + rest.join('\n') + '\n');
    await run(r); // foreign: miss
    writeFileSync(entry, [head, ...rest.slice(0, -1)].join('\n') + '\n');
    await run(r); // cut short (one request missing): miss
    writeFileSync(entry, [head, '{"keys":"x"}', ...rest.slice(1)].join('\n') + '\n');
    await run(r); // a session line of the wrong shape: miss
    assert.deepEqual(results, ['miss', 'miss', 'hit', 'miss', 'miss', 'miss']);
    assert.equal(readFileSync(entry, 'utf8'), good);
    assert.equal(JSON.parse(head).sessions, 1);
    assert.equal(rest.length, 1 + 8); // one session line, then its 8 requests
  });

  it('other provider rules are another entry', async () => {
    await run();
    await run(undefined, { ...defaultRules });
    // Equal rules (another object, same content) share the entry.
    assert.deepEqual(results, ['miss', 'hit']);
    const edited = structuredClone(defaultRules);
    edited.families[0].multipliers.read = 0.5;
    await run(undefined, edited);
    assert.equal(results[2], 'miss');
  });

  it('OpenCode sessions in one database are cached by their own stamp', async () => {
    const refs = await findSessions('test/fixtures/opencode/opencode.db');
    for (const r of refs) await run(r);
    for (const r of refs) await run(r);
    assert.deepEqual(results, [...refs.map(() => 'miss'), ...refs.map(() => 'hit')]);
    await run({ ...refs[0], stamp: `${refs[0].stamp}x` });
    assert.equal(results.at(-1), 'miss');
  });
});
