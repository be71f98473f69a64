/**
 * The result cache and the capture join: an entry analyzed before the proxy saved a session's
 * bodies is not used once they are there (the identity carries the mtimes of every capture folder
 * the join can look at: the session's own and the day folders from the session's start to its
 * last write), and a warm run with the bodies in place is a hit.
 */
import assert from 'node:assert/strict';
import { cpSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeRefCached } from '../../../src/cache/results.js';
import { listSqliteSessions, releaseOpenCodeStores } from '../../../src/hosts/opencode/discover.js';
import { piRef } from '../../../src/hosts/pi/discover.js';
import { sessionIds } from '../opencode/helpers.js';

describe('result cache: captured bodies saved after the analysis', () => {
  const saved = process.env.PREFIX_LENS_CAPTURE_DIRS;
  after(() => {
    if (saved === undefined) delete process.env.PREFIX_LENS_CAPTURE_DIRS;
    else process.env.PREFIX_LENS_CAPTURE_DIRS = saved;
  });

  it('reconstructed while no body is captured, wire once the bodies are there, then a hit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-capstamp-'));
    const fx = 'test/fixtures/pi-capture/main';
    const sub = readdirSync(join(fx, 'agent/sessions'))[0];
    const name = readdirSync(join(fx, 'agent/sessions', sub))[0];
    const file = join(dir, name);
    copyFileSync(join(fx, 'agent/sessions', sub, name), file);
    // The transcript was last written with its last request (its mtime, as on the recording day).
    const last = readFileSync(file, 'utf8').trim().split('\n').pop()!;
    const t = new Date(JSON.parse(last).timestamp as string);
    utimesSync(file, t, t);
    const root = join(dir, 'captures');
    process.env.PREFIX_LENS_CAPTURE_DIRS = root;
    const cacheDir = join(dir, 'cache');
    const seen: string[] = [];
    const run = async () => (await analyzeRefCached((await piRef(file, 'named'))!, { cacheDir, onResult: (k) => seen.push(k) }))[0];

    assert.equal((await run()).evidence, 'reconstructed');
    cpSync(join(fx, 'captures'), root, { recursive: true });
    const after = await run();
    assert.equal(after.evidence, 'wire');
    assert.equal(after.requests.length, 16);
    assert.equal((await run()).evidence, 'wire');
    assert.deepEqual(seen, ['miss', 'miss', 'hit']);
  });
  it('a session last written days after its requests (a label added later): bodies of the request day still invalidate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-capstamp-'));
    const fx = 'test/fixtures/pi-capture/main';
    const sub = readdirSync(join(fx, 'agent/sessions'))[0];
    const name = readdirSync(join(fx, 'agent/sessions', sub))[0];
    const file = join(dir, name);
    copyFileSync(join(fx, 'agent/sessions', sub, name), file);
    // Three days after the last entry: the day folders of its requests are neither that day nor the one before.
    const last = new Date(JSON.parse(readFileSync(file, 'utf8').trim().split('\n').pop()!).timestamp as string);
    const later = new Date(last.getTime() + 3 * 86_400_000);
    utimesSync(file, later, later);
    const root = join(dir, 'captures');
    process.env.PREFIX_LENS_CAPTURE_DIRS = root;
    const cacheDir = join(dir, 'cache');
    const seen: string[] = [];
    const run = async () => (await analyzeRefCached((await piRef(file, 'named'))!, { cacheDir, onResult: (k) => seen.push(k) }))[0];

    assert.equal((await run()).evidence, 'reconstructed');
    // Only the day folder (Pi on Chat Completions and Messages sends no session header; its
    // Responses requests, in the session folder, are left out): nothing but a day folder changes.
    const day = readdirSync(join(fx, 'captures')).find((d) => /^\d{4}-\d\d-\d\d$/.test(d))!;
    cpSync(join(fx, 'captures', day), join(root, day), { recursive: true });
    const wire = (s: { requests: Array<{ evidence: string }> }) => s.requests.filter((r) => r.evidence === 'wire').length;
    assert.equal(wire(await run()), 14);
    assert.equal(wire(await run()), 14);
    assert.deepEqual(seen, ['miss', 'miss', 'hit']);
  });

  it('an OpenCode session (a row stamp, no file of its own): a capture saved after the analysis invalidates it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-capstamp-'));
    const fx = 'test/fixtures/opencode-capture';
    const db = join(dir, 'opencode.db');
    copyFileSync(join(fx, 'opencode.db'), db);
    const root = join(dir, 'captures');
    process.env.PREFIX_LENS_CAPTURE_DIRS = root;
    const cacheDir = join(dir, 'cache');
    const id = sessionIds(fx).sessions.basic;
    const seen: string[] = [];
    const run = async () => {
      const ref = (await listSqliteSessions(db)).find((r) => r.id === id)!;
      const out = (await analyzeRefCached(ref, { cacheDir, onResult: (k) => seen.push(k) }))[0];
      releaseOpenCodeStores();
      return out;
    };
    assert.equal((await run()).evidence, 'reconstructed');
    // Another session's folder: not this session's, the entry stays valid.
    cpSync(join(fx, 'captures', `session-${sessionIds(fx).sessions.anthropic}`), join(root, `session-${sessionIds(fx).sessions.anthropic}`), { recursive: true });
    assert.equal((await run()).evidence, 'reconstructed');
    cpSync(join(fx, 'captures', `session-${id}`), join(root, `session-${id}`), { recursive: true });
    const after = await run();
    assert.equal(after.evidence, 'wire');
    assert.equal(after.requests.length, 7);
    assert.equal((await run()).evidence, 'wire');
    assert.deepEqual(seen, ['miss', 'hit', 'miss', 'hit']);
  });
});
