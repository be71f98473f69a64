/**
 * The V8 code cache of the CLI's analysis bundle (src/cli/codecache.ts): the next process takes
 * the cached data; a corrupt entry, data V8 rejects and a changed source are compiled from source
 * and the entry written again; the module behaves as `require` would load it. (One process loads
 * the bundle once, and V8 data is tied to the flags of the process that made it: saves and loads
 * run in new processes.)
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeCacheFile, loadCached, type CodeCacheResult } from '../../../src/cli/codecache.js';

describe('code cache (the analysis bundle compiled once)', function () {
  this.timeout(60_000); // new Node processes on a shared machine
  let dir: string;
  let file: string;
  let cacheDir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-code-'));
    file = join(dir, 'bundle.cjs');
    cacheDir = join(dir, 'cache');
    writeFileSync(
      file,
      "exports.answer = 40 + 2;\nexports.file = __filename;\nexports.join = require('node:path').join('a', 'b');\nexports.self = module.exports === exports;\nexports.f = function big(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; };\n",
    );
  });
  afterEach(() => {
    delete require.cache[file];
    rmSync(dir, { recursive: true, force: true });
  });
  /** Loads the bundle in this process and checks it behaves as `require` would load it. */
  const load = () => {
    delete require.cache[file];
    const r = loadCached(file, cacheDir);
    const e = r.exports as { answer: number; file: string; join: string; self: boolean; f: (n: number) => number };
    assert.deepEqual([e.answer, e.file, e.join, e.self, e.f(10)], [42, file, join('a', 'b'), true, 45]);
    assert.equal(require.cache[file]?.exports, r.exports, 'registered as require would');
    return r;
  };
  /** What a new process's load does (and it saves, as the bin does at exit). */
  const fresh = async (): Promise<CodeCacheResult> => {
    const { execa } = await import('execa'); // ESM-only package
    const probe = `const { loadCached } = require(${JSON.stringify(join(process.cwd(), 'src/cli/codecache.ts'))}); const r = loadCached(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)}); r.save(); process.stdout.write(r.result + ':' + r.exports.answer);`;
    const out = (await execa('node', ['--import', 'tsx', '-e', probe])).stdout;
    assert.match(out, /:42$/);
    return out.split(':')[0] as CodeCacheResult;
  };

  it('loads the module as require would; misses once, then the next process hits with the saved data; a hit writes nothing', async () => {
    assert.equal(load().result, 'miss');
    // Saved and loaded by processes with the same V8 flags (data made under other flags is rejected).
    assert.equal(await fresh(), 'miss');
    const entry = codeCacheFile(cacheDir, file)!;
    const saved = readFileSync(entry);
    assert.equal(await fresh(), 'hit');
    assert.deepEqual(readFileSync(entry), saved);
  });

  it('ignores a corrupt entry, a cut one and data V8 rejects, and writes the entry again', async () => {
    assert.equal(await fresh(), 'miss');
    const entry = codeCacheFile(cacheDir, file)!;
    const good = readFileSync(entry);
    const flipped = Buffer.from(good);
    flipped[flipped.length - 1] ^= 0xff;
    writeFileSync(entry, flipped); // the checksum no longer matches: never handed to V8
    assert.equal(await fresh(), 'miss');
    assert.equal(await fresh(), 'hit', 'rewritten');
    writeFileSync(entry, good.subarray(0, 20));
    assert.equal(await fresh(), 'miss');
    assert.equal(await fresh(), 'hit', 'rewritten');
    const garbage = Buffer.from('not V8 data at all, but with a valid checksum');
    writeFileSync(entry, Buffer.concat([createHash('sha256').update(garbage).digest(), garbage]));
    assert.equal(await fresh(), 'rejected');
    assert.equal(await fresh(), 'hit', 'rewritten');
  });

  it('a changed bundle is another entry (its size and mtime are in the name)', async () => {
    assert.equal(await fresh(), 'miss');
    const before = codeCacheFile(cacheDir, file);
    writeFileSync(file, `${readFileSync(file, 'utf8')}exports.more = 1;\n`);
    assert.notEqual(codeCacheFile(cacheDir, file), before);
    assert.equal(await fresh(), 'miss');
  });

  it('data saved by a run that exposed gc after the load (memory.ts) is taken by the next process, and holds the functions the run compiled', async () => {
    const { execa } = await import('execa'); // ESM-only package
    const memory = JSON.stringify(join(process.cwd(), 'src/memory.ts'));
    // As the CLI does: load, run (f compiled lazily), get gc from memory.ts (sets and unsets the
    // flag), collect, save at exit; prints what V8 data made right after the top level weighs.
    const probe = `const { loadCached } = require(${JSON.stringify(join(process.cwd(), 'src/cli/codecache.ts'))}); const r = loadCached(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)}); r.exports.f(10); const gc = require(${memory}).gcFunction(); gc(); r.save(); process.stdout.write(r.result + ':' + r.data.length + ':' + typeof gc);`;
    const [result, early, gcType] = (await execa('node', ['--import', 'tsx', '-e', probe])).stdout.split(':');
    assert.deepEqual([result, gcType], ['miss', 'function']);
    const entry = codeCacheFile(cacheDir, file)!;
    assert.ok(readFileSync(entry).length - 32 > Number(early), `entry ${readFileSync(entry).length - 32} bytes, data after the top level ${early}`);
    assert.equal(await fresh(), 'hit');
  });

  it("a worker thread takes the main thread's data (made on a miss, taken on a hit) and writes no entry", async () => {
    const { execa } = await import('execa'); // ESM-only package
    const src = JSON.stringify(join(process.cwd(), 'src/cli/codecache.ts'));
    const workerFile = join(dir, 'worker.cjs');
    writeFileSync(
      workerFile,
      `const { loadCached } = require(${src}); const { workerData, parentPort } = require('node:worker_threads');
const x = loadCached(workerData.file, '', workerData.data);
parentPort.postMessage(x.result + ':' + x.exports.answer + ':' + (x.data === null ? 'none' : 'data'));`,
    );
    // The main thread loads (and saves, as the bin does), then a worker loads with its `data`.
    const probe = `const { loadCached } = require(${src}); const { Worker } = require('node:worker_threads');
const r = loadCached(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)}); r.save();
new Worker(${JSON.stringify(workerFile)}, { workerData: { file: ${JSON.stringify(file)}, data: r.data } }).on('message', (m) => process.stdout.write(r.result + '/' + m));`;
    const run = async () => (await execa('node', ['--import', 'tsx', '-e', probe])).stdout;
    assert.equal(await run(), 'miss/hit:42:data');
    const entry = codeCacheFile(cacheDir, file)!;
    const saved = readFileSync(entry);
    assert.equal(await run(), 'hit/hit:42:data');
    assert.deepEqual(readFileSync(entry), saved);
  });
});
