import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resetText } from '../../../src/cli/watch.js';
import { resetCause } from '../../../src/live/session.js';

const LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';
const ID = '01a230ec-991a-7497-9a50-b9f4f6517541';

describe('analyze --watch says what happened to a file it reads again', () => {
  it('resetCause tells deleted, created, replaced, truncated, grew, rewritten and a changed database apart', () => {
    const f = (ino: number, size: number) => ({ dev: 1, ino, size });
    assert.deepEqual(resetCause(f(7, 100), null, false), { kind: 'deleted', from: 100, to: null });
    assert.deepEqual(resetCause(null, f(7, 100), false), { kind: 'created', from: null, to: 100 });
    assert.deepEqual(resetCause(f(7, 100), f(8, 100), false), { kind: 'replaced', from: 100, to: 100 });
    assert.deepEqual(resetCause(f(7, 100), f(7, 40), false), { kind: 'truncated', from: 100, to: 40 });
    assert.deepEqual(resetCause(f(7, 100), f(7, 140), false), { kind: 'grew', from: 100, to: 140 });
    assert.deepEqual(resetCause(f(7, 100), f(7, 100), false), { kind: 'rewritten', from: 100, to: 100 });
    assert.deepEqual(resetCause(f(7, 100), f(7, 90), true), { kind: 'changed', from: 100, to: 90 });
  });

  it('the recorded long Pi session truncated, deleted, then written again: one line each, never "rewritten"', async function () {
    this.timeout(60_000);
    const { execa } = await import('execa'); // ESM-only package
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-watch-reset-'));
    try {
      const file = join(dir, 's.jsonl');
      const lines = readFileSync(join(LONG, readdirSync(LONG)[0]), 'utf8').trimEnd().split('\n');
      const first = `${lines.slice(0, 14).join('\n')}\n`;
      writeFileSync(file, first);
      const child = execa('node', ['dist/cli.js', 'analyze', '--watch', file], { reject: false, buffer: false, env: { XDG_CACHE_HOME: join(dir, 'cache') } });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const waitFor = (what: string) =>
        new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`timed out waiting for ${JSON.stringify(what)}; got ${out}`)), 20_000);
          const check = () => (out.includes(what) ? (clearTimeout(t), resolve()) : setTimeout(check, 20));
          check();
        });
      await waitFor('totals:');
      const short = `${lines.slice(0, 8).join('\n')}\n`;
      writeFileSync(file, short);
      await waitFor('truncated');
      unlinkSync(file);
      await waitFor('deleted');
      writeFileSync(join(dir, 'new'), first);
      renameSync(join(dir, 'new'), file);
      await waitFor('created again');
      await waitFor('hit rate 59.1%');
      child.kill('SIGINT');
      assert.equal((await child).exitCode, 0);
      const said = out.split('\n').filter((l) => l.startsWith('pi session ') && l.includes(': the '));
      assert.deepEqual(said, [
        `pi session ${ID}: the file was truncated (${Buffer.byteLength(first).toLocaleString('en-US')} bytes → ${Buffer.byteLength(short).toLocaleString('en-US')} bytes); read again`,
        `pi session ${ID}: the file was deleted; nothing to read until it is written again`,
        `pi session ${ID}: the file was created again (${Buffer.byteLength(first).toLocaleString('en-US')} bytes); read`,
      ]);
      assert.deepEqual([Buffer.byteLength(first), Buffer.byteLength(short)], [4833, 2182]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resetText words each cause with its sizes', () => {
    assert.equal(resetText({ kind: 'grew', from: 1000, to: 1234 }), 'the file grew (1,000 bytes → 1,234 bytes); read again');
    assert.equal(resetText({ kind: 'replaced', from: 1, to: 2 }), 'the file was replaced by another file (1 byte → 2 bytes); read again');
    assert.equal(resetText({ kind: 'rewritten', from: 5, to: 5 }), 'the file was rewritten (5 bytes); read again');
    assert.equal(resetText({ kind: 'changed', from: 5, to: 9 }), 'the database changed; read again');
  });
});
