/**
 * The warm entry's content check without hashing (identity.ts identityBySample): a file whose size,
 * mtime and first and last 64 KiB are the sample's has exactly the identity identityWithRules
 * gives (the same head/tail SHA-256, the capture stamp taken now), and any byte of either end,
 * the size or the mtime that differs is a miss.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityBySample, identityWithRules, identityWithSample, type RefIdentityFields } from '../../../src/cache/identity.js';
import { piRef } from '../../../src/hosts/pi/discover.js';

describe('identity by sample (the warm entry compares bytes instead of hashing)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-sample-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const fields = async (file: string): Promise<RefIdentityFields> => {
    const r = (await piRef(file, 'named'))!;
    return { host: r.host, key: r.key, path: r.path, id: r.id, mtimeMs: r.mtimeMs, parentId: r.parentId, stamp: r.stamp, startMs: r.startMs };
  };
  /** A Pi session of `bytes` bytes: a fixture's header line, then filler lines (the content check reads bytes, not JSON). */
  const session = (name: string, bytes: number): string => {
    const fixture = readdirSync('test/fixtures/pi/main/agent/sessions', { recursive: true, withFileTypes: true }).find((e) => e.isFile() && e.name.endsWith('.jsonl'))!;
    const header = readFileSync(join(fixture.parentPath, fixture.name), 'utf8').split('\n')[0];
    const lines = [header];
    for (let i = 0; lines.join('\n').length < bytes; i++) lines.push(JSON.stringify({ type: 'custom', n: i, pad: 'x'.repeat(200) }));
    const file = join(dir, name);
    writeFileSync(file, `${lines.join('\n').slice(0, bytes - 1)}\n`);
    utimesSync(file, new Date(MTIME), new Date(MTIME));
    return file;
  };
  /** A whole-millisecond mtime (utimes can set it back exactly). */
  const MTIME = Date.UTC(2026, 10, 20, 12);
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    env = { XDG_STATE_HOME: join(dir, 'state') };
  });
  /** What a manifest keeps of an identity (warm.ts ManifestRef check). */
  const check = (id: { size: number | null; mtimeMs: number | null; head: string | null; tail: string | null }) => ({ size: id.size!, mtimeMs: id.mtimeMs!, head: id.head!, tail: id.tail! });

  it('gives identityWithRules exactly, for a file below, at and above 64 KiB and every Pi fixture session', async () => {
    const files = [session('small.jsonl', 5_000), session('exact.jsonl', 64 * 1024), session('between.jsonl', 100_000), session('large.jsonl', 300_000)];
    cpSync('test/fixtures/pi', join(dir, 'fixtures'), { recursive: true });
    for (const e of readdirSync(join(dir, 'fixtures'), { recursive: true, withFileTypes: true })) if (e.isFile() && e.name.endsWith('.jsonl')) files.push(join(e.parentPath, e.name));
    assert.equal(files.length, 6);
    for (const file of files) {
      const ref = await fields(file);
      const s = (await identityWithSample(ref, 'r', env))!;
      const want = await identityWithRules(ref, 'r', env);
      assert.deepEqual(s.id, want, file);
      const bytes = readFileSync(file);
      const n = Math.min(bytes.length, 64 * 1024);
      assert.deepEqual(s.head, bytes.subarray(0, n));
      assert.deepEqual(s.tail, bytes.subarray(bytes.length - n));
      assert.deepEqual(await identityBySample(ref, 'r', env, check(s.id), s), want, file);
    }
  });

  it('the capture stamp is taken now, as identityWithRules takes it (a capture folder made after the sample)', async () => {
    const file = session('s.jsonl', 100_000);
    const ref = await fields(file);
    const s = (await identityWithSample(ref, 'r', env))!;
    assert.equal(s.id.captures, null);
    mkdirSync(join(dir, 'state/prefix-lens/captures', new Date(ref.mtimeMs).toISOString().slice(0, 10)), { recursive: true });
    const now = await identityBySample(ref, 'r', env, check(s.id), s);
    assert.ok(now?.captures);
    assert.deepEqual(now, await identityWithRules(ref, 'r', env));
  });

  it('misses when a byte of the head or of the tail, the size or the mtime differs, or the sample is of another length', async () => {
    const file = session('s.jsonl', 300_000);
    const ref = await fields(file);
    const s = (await identityWithSample(ref, 'r', env))!;
    const expected = check(s.id);
    const flip = (b: Buffer, at: number) => {
      const c = Buffer.from(b);
      c[at] ^= 1;
      return c;
    };
    for (const at of [0, 1000, s.head.length - 1]) assert.equal(await identityBySample(ref, 'r', env, expected, { head: flip(s.head, at), tail: s.tail }), null, `head byte ${at}`);
    for (const at of [0, 1000, s.tail.length - 1]) assert.equal(await identityBySample(ref, 'r', env, expected, { head: s.head, tail: flip(s.tail, at) }), null, `tail byte ${at}`);
    assert.equal(await identityBySample(ref, 'r', env, expected, { head: s.head.subarray(1), tail: s.tail.subarray(1) }), null, 'shorter sample');
    assert.equal(await identityBySample(ref, 'r', env, { ...check(s.id), size: 299_999 }, s), null, 'size');
    assert.equal(await identityBySample(ref, 'r', env, { ...check(s.id), mtimeMs: MTIME + 1 }, s), null, 'mtime');
    // The file rewritten in place with the same size and mtime: a byte in its last 64 KiB.
    const bytes = readFileSync(file);
    writeFileSync(file, flip(bytes, bytes.length - 10));
    utimesSync(file, new Date(MTIME), new Date(MTIME));
    assert.equal(statSync(file).size, s.id.size);
    assert.equal(statSync(file).mtimeMs, s.id.mtimeMs);
    assert.equal(await identityBySample(ref, 'r', env, expected, s), null, 'rewritten in place');
    writeFileSync(file, bytes);
    utimesSync(file, new Date(MTIME), new Date(MTIME));
    assert.deepEqual(await identityBySample(ref, 'r', env, expected, s), s.id, 'restored');
  });
});
