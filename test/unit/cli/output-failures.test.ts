/**
 * What the CLI writes when its outputs meet each other or fail: `--json --html FILE` gives the same
 * HTML as `--html FILE` alone however the sessions come (analyzed, from the result and output
 * caches, from worker threads); a stdout that refuses the output (a full disk: /dev/full) is one
 * line on stderr and exit 2, in the full CLI and in the warm entry, not a stack trace and exit 1;
 * `check` lists the breaks of what it read before failing on what it could not read.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCli } from '../../runCli.js';

const PI_LONG = resolve('test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--');

describe('CLI outputs: --json with --html, a stdout that fails, check beside an unreadable input', () => {
  let dir: string;
  let savedCache: string | undefined;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-outputs-'));
    savedCache = process.env.XDG_CACHE_HOME;
  });
  after(() => {
    if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedCache;
    rmSync(dir, { recursive: true, force: true });
  });

  it('--json --html FILE: the HTML of --html alone, on a cold cache, a warm one and from 2 workers; stdout the --json of --json alone', async () => {
    const { execa } = await import('execa'); // ESM-only package
    const alone = join(dir, 'alone.html');
    const base = await runCli(['analyze', '--examples', '--no-cache', '--html', alone]);
    assert.deepEqual([base.code, base.err], [0, `prefix-lens: wrote the timeline of 11 sessions, 85 requests to ${alone}`]);
    const json = (await runCli(['analyze', '--examples', '--no-cache', '--json'])).out;
    for (const [label, env] of [['one thread', {}], ['2 workers', { PREFIX_LENS_WORKERS: '2' }]] as const) {
      const cache = join(dir, `cache-${label.replace(' ', '-')}`);
      for (const run of ['cold', 'warm']) {
        const file = join(dir, `both-${label.replace(' ', '-')}-${run}.html`);
        const r = await execa('node', ['dist/cli.js', 'analyze', '--examples', '--json', '--html', file], { env: { ...env, XDG_CACHE_HOME: cache }, reject: false });
        assert.deepEqual([r.exitCode, r.stderr], [0, `prefix-lens: wrote the timeline of 11 sessions, 85 requests to ${file}`], `${label}, ${run}`);
        assert.equal(r.stdout, json, `${label}, ${run}: stdout`);
        assert.ok(readFileSync(file).equals(readFileSync(alone)), `${label}, ${run}: the HTML`);
      }
    }
  });

  it('a stdout on a full disk (/dev/full): one line on stderr, exit 2 (text, --json, --html -, check, the warm entry)', async function () {
    if (!existsSync('/dev/full')) this.skip();
    const { execa } = await import('execa');
    const cache = join(dir, 'cache-full');
    // A warm answer to fail: the output entry written by a first run.
    await execa('node', ['dist/cli.js', 'analyze', '--json', PI_LONG], { env: { XDG_CACHE_HOME: cache } });
    const line = 'prefix-lens: cannot write the output (ENOSPC: no space left on device, write)';
    for (const args of [['analyze', '--examples'], ['analyze', '--examples', '--json', '--no-cache'], ['analyze', '--examples', '--html', '-', '--no-cache'], ['check', '--examples', '--no-cache'], ['analyze', '--json', PI_LONG]]) {
      const r = await execa('sh', ['-c', 'exec "$@" > /dev/full', 'sh', 'node', 'dist/cli.js', ...args], { env: { XDG_CACHE_HOME: cache }, reject: false });
      assert.deepEqual([r.exitCode, r.stderr], [2, line], args.join(' '));
    }
  });

  it('check beside an empty session file: the breaks of the session read are listed, then the error, exit 2', async () => {
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const pi = join(PI_LONG, readdirSync(PI_LONG).find((f) => f.endsWith('.jsonl'))!);
    const copy = join(dir, 'long.jsonl');
    copyFileSync(pi, copy);
    const r = await runCli(['check', '--no-cache', copy, empty]);
    assert.equal(r.code, 2);
    assert.deepEqual(r.outLines, [
      `${copy}:11: pi session 01a230ec-991a-7497-9a50-b9f4f6517541 request #4 breaks the cache (system-changed): ~1616 tokens re-billed, $0.00558`,
      '1 request breaks the cache',
    ]);
    assert.deepEqual(r.err.split('\n'), [
      `${empty}:1: empty session file (0 bytes or only blank lines): no header, no entries, nothing to analyze`,
      'prefix-lens: 1 input could not be read or held no session',
    ]);
    // Nothing read at all: no summary line that would read as a pass.
    const none = await runCli(['check', '--no-cache', empty]);
    assert.deepEqual([none.code, none.out], [2, '']);
  });
});
