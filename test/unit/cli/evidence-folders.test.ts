/**
 * A mistyped evidence folder (`--requests DIR`, `--captures DIR`) is a usage error: exit 2, one
 * line, nothing on stdout. Bodies named through a relative `--requests` are named absolute, and an
 * empty body file is said to be one.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main } from '../../../src/cli/main.js';
import type { Report } from '../../../src/report/json.js';

const PI_LONG = resolve('test/fixtures/pi/long');
const SESSIONS = join(PI_LONG, 'agent/sessions/--home-user-pi-lab-long-project--');
const SESSION = join(SESSIONS, readdirSync(SESSIONS)[0]);

async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, (s) => void out.push(s), (s) => void err.push(s), resolve('.'));
  return { code, out, err };
}

describe('evidence folders named on the command line', () => {
  const cases: Array<[string[], string]> = [
    [['analyze', SESSION, '--captures', '/nonexistent'], 'prefix-lens: --captures /nonexistent: no such folder'],
    [['analyze', SESSION, '--captures', join(PI_LONG, 'requests'), '--captures', '/nonexistent/x'], 'prefix-lens: --captures /nonexistent/x: no such folder'],
    [['analyze', SESSION, '--requests', '/nonexistent'], 'prefix-lens: --requests /nonexistent: no such folder'],
    [['check', SESSION, '--requests', '/nonexistent'], 'prefix-lens: --requests /nonexistent: no such folder'],
    [['analyze', SESSION, '--requests', SESSION], `prefix-lens: --requests ${SESSION}: not a folder`],
    [['analyze', SESSION, '--requests', join(SESSION, 'x')], `prefix-lens: --requests ${join(SESSION, 'x')}: no such folder`],
    [['diff', SESSION, '2', '--requests', '/nonexistent'], 'prefix-lens diff: --requests /nonexistent: no such folder'],
    [['diff', SESSION, '2', '--captures', SESSION], `prefix-lens diff: --captures ${SESSION}: not a folder`],
  ];
  for (const [args, line] of cases) {
    it(`${args.slice(0, 1).join(' ')} … ${args.slice(-2).join(' ')}: exit 2, "${line}"`, async () => {
      const r = await run(args);
      assert.deepEqual(r, { code: 2, out: [], err: [line] });
    });
  }

  it('a relative --requests names its bodies absolute, and a 0-byte body is "an empty file"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-evidence-'));
    const cwd = process.cwd();
    const cache = process.env.XDG_CACHE_HOME;
    try {
      cpSync(join(PI_LONG, 'requests'), join(dir, 'req'), { recursive: true });
      writeFileSync(join(dir, 'req/001-anthropic-messages.body.json'), '');
      cpSync(SESSION, join(dir, 's.jsonl'));
      process.env.XDG_CACHE_HOME = join(dir, 'cache');
      process.chdir(dir);
      const r = await run(['analyze', '--json', '--no-cache', 's.jsonl', '--requests', 'req']);
      process.chdir(cwd);
      assert.equal(r.code, 0);
      const report = JSON.parse(r.out.join('\n')) as Report;
      assert.deepEqual(report.sessions[0].diagnostics, [
        { file: join(dir, 'req/001-anthropic-messages.body.json'), line: 1, message: 'request body is an empty file; skipped', severity: 'error' },
        { file: join(dir, 's.jsonl'), line: 5, message: `assistant entry has no captured request body in ${join(dir, 'req')}; its request is reconstructed`, severity: 'warning' },
      ]);
      assert.deepEqual(report.sessions[0].requests.map((q) => q.evidence).slice(0, 3), ['reconstructed', 'wire', 'wire']);
      // Only whitespace is empty too.
      writeFileSync(join(dir, 'req/001-anthropic-messages.body.json'), ' \n');
      const again = await run(['analyze', '--json', '--no-cache', join(dir, 's.jsonl'), '--requests', join(dir, 'req')]);
      assert.equal((JSON.parse(again.out.join('\n')) as Report).sessions[0].diagnostics[0].message, 'request body is an empty file (only whitespace); skipped');
    } finally {
      process.chdir(cwd);
      if (cache === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = cache;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
