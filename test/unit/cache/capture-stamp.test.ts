/**
 * The result cache and the capture join: an entry analyzed before the proxy saved a session's
 * bodies is not used once they are there (the identity carries the capture folders' mtimes), and a
 * warm run with the bodies in place is a hit.
 */
import assert from 'node:assert/strict';
import { cpSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeRefCached } from '../../../src/cache/results.js';
import { piRef } from '../../../src/hosts/pi/discover.js';

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
    const run = async () => (await analyzeRefCached((await piRef(file, true))!, { cacheDir, onResult: (k) => seen.push(k) }))[0];

    assert.equal((await run()).evidence, 'reconstructed');
    cpSync(join(fx, 'captures'), root, { recursive: true });
    const after = await run();
    assert.equal(after.evidence, 'wire');
    assert.equal(after.requests.length, 16);
    assert.equal((await run()).evidence, 'wire');
    assert.deepEqual(seen, ['miss', 'miss', 'hit']);
  });
});
