// What a cache folder loses to pruning: older versions' folders, old-layout run manifests and
// abandoned temporary files; the current version's entries, manifests and live writes stay.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { CACHE_VERSION } from '../../../src/cache/identity.js';
import { pruneCache } from '../../../src/cache/prune.js';
import { runCli } from '../../runCli.js';

describe('result cache pruning', () => {
  let dir: string;
  const cur = `v${CACHE_VERSION}`;
  const touch = (rel: string, ageMs = 0) => {
    const p = join(dir, rel);
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, 'x');
    if (ageMs) utimesSync(p, new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pl-prune-'));
    touch('v0/a.out');
    touch(`v${CACHE_VERSION - 1}/runs/b.json`);
    touch(`${cur}/kept.out`);
    touch(`${cur}/kept.tail`);
    touch(`${cur}/live.out.1.abc.tmp`, 5 * 60 * 1000);
    touch(`${cur}/dead.out.2.def.tmp`, 2 * 60 * 60 * 1000);
    touch(`${cur}/runs/0011223344556677-20.manifest`);
    touch(`${cur}/runs/0011223344556677.json`);
    touch(`${cur}/code/cli-main.bin`);
    touch('vnext/keep');
    touch(`v${CACHE_VERSION + 1}/newer.out`);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('removes older version folders, old-layout manifests and temporary files older than an hour', async () => {
    const removed = (await pruneCache(dir)).map((p) => relative(dir, p)).sort();
    assert.deepEqual(removed, [`${cur}/dead.out.2.def.tmp`, `${cur}/runs/0011223344556677.json`, 'v0', `v${CACHE_VERSION - 1}`].sort());
    for (const kept of [`${cur}/kept.out`, `${cur}/kept.tail`, `${cur}/live.out.1.abc.tmp`, `${cur}/runs/0011223344556677-20.manifest`, `${cur}/code/cli-main.bin`, 'vnext/keep', `v${CACHE_VERSION + 1}/newer.out`]) {
      assert.ok(existsSync(join(dir, kept)), kept);
    }
    // A missing folder is nothing to prune, not an error.
    assert.deepEqual(await pruneCache(join(dir, 'missing')), []);
  });

  it('analyze with the cache prunes it; --no-cache leaves the folder alone', async () => {
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = dir;
    try {
      mkdirSync(join(dir, 'prefix-lens', 'v0'), { recursive: true });
      assert.equal((await runCli(['analyze', '--no-cache', 'test/fixtures/pi/main'])).code, 0);
      assert.ok(existsSync(join(dir, 'prefix-lens', 'v0')));
      assert.equal((await runCli(['analyze', 'test/fixtures/pi/main'])).code, 0);
      assert.ok(!existsSync(join(dir, 'prefix-lens', 'v0')));
      assert.ok(existsSync(join(dir, 'prefix-lens', cur)));
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });
});
