/**
 * A token count that is not a finite non-negative number (a string "12", null, NaN as a string,
 * a negative number, 1e400, an object, a boolean) no longer fails the whole line and drops its
 * request: the recorded Pi main session with one usage field corrupted still gives all 13
 * requests; the corrupted one has that field unknown (null, not 0; its other fields as recorded)
 * and a warning at its line naming the field and its value as written; every other request's
 * verdict is the unmodified recording's. (Every host: usage-numbers-lenient.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkJson, runCli } from '../hostile/harness.js';

const SESSIONS = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const RECORDED = join(SESSIONS, readdirSync(SESSIONS).find((n) => n.endsWith('.jsonl'))!);
/** The bad values, as JSON text. */
const BAD = ['"12"', 'null', '"NaN"', '-5', '1e400', '{"n":12}', 'true'];

describe('non-number usage: Pi main session, usage.cacheRead of request #3 (line 9) corrupted', function () {
  this.timeout(120_000);
  let dir: string;
  let baseline: Array<{ line: number; verdict: string }>;
  let usage3: Record<string, number | null>;
  const original = readFileSync(RECORDED, 'utf8');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-non-number-'));
    writeFileSync(join(dir, 's.jsonl'), original);
    const report = checkJson(await runCli(['analyze', '--json', '--no-cache', join(dir, 's.jsonl')]), 'recorded');
    baseline = report.sessions[0].requests.map((r) => ({ line: r.line, verdict: r.verdict as string }));
    usage3 = report.sessions[0].requests[2].usage!;
    assert.deepEqual(baseline.map((r) => r.line), [5, 7, 9, 12, 20, 22, 24, 28, 33, 38, 41, 43, 45]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const bad of BAD) {
    it(`cacheRead ${bad}: 13 requests, #3 cacheRead null with a warning at line 9, the others' verdicts unchanged`, async () => {
      const lines = original.split('\n');
      assert.match(lines[8], /"cacheRead":\d+/);
      lines[8] = lines[8].replace(/"cacheRead":\d+/, `"cacheRead":${bad}`);
      const file = join(dir, 's.jsonl');
      writeFileSync(file, lines.join('\n'));
      const report = checkJson(await runCli(['analyze', '--json', '--no-cache', file]), bad);
      const reqs = report.sessions[0].requests;
      assert.equal(reqs.length, 13);
      assert.equal(reqs[2].line, 9);
      assert.deepEqual(reqs[2].usage, { ...usage3, cacheRead: null });
      const warn = report.sessions[0].diagnostics.filter((d) => d.line === 9);
      assert.equal(warn.length, 1);
      assert.equal(warn[0].severity, 'warning');
      // The value as written (1e400 is Infinity after JSON.parse).
      assert.equal(warn[0].message, `values taken as unknown: message.usage.cacheRead ${bad === '1e400' ? 'Infinity' : bad} is not a token count (a non-negative integer ≤ 1000000000000)`);
      assert.equal(warn[0].file, file);
      const others = reqs.map((r) => ({ line: r.line, verdict: r.verdict as string })).filter((r) => r.line !== 9);
      assert.deepEqual(others, baseline.filter((r) => r.line !== 9));
    });
  }
});
