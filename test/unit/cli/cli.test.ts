/**
 * The CLI main job on the bundled examples and on bad input: the built bin (dist/cli.js, made by
 * `npm test`'s build step) and the in-process entry point.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.js';
import type { Report } from '../../../src/report/json.js';

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, (s) => out.push(s), (s) => err.push(s), process.cwd());
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('prefix-lens CLI', () => {
  it('analyze --json with no path reports the bundled examples (Pi main in wire mode first)', async () => {
    const { code, out } = await run(['analyze', '--json']);
    assert.equal(code, 0);
    const report = JSON.parse(out) as Report;
    assert.equal(report.version, 1);
    const main = report.sessions[0];
    assert.equal(main.host, 'pi');
    assert.equal(main.requests.length, 16);
    assert.deepEqual(main.requests.map((r) => r.evidence), Array(16).fill('wire'));
    const compaction = main.requests[10];
    assert.deepEqual(
      [compaction.index, compaction.line, compaction.kind, compaction.verdict, compaction.break?.segment, compaction.break?.blockIndex, compaction.break?.byteOffset],
      [11, 33, 'agent', 'break', 'messages', 0, 84],
    );
    assert.equal(compaction.causes[0].kind, 'history-rewritten');
    assert.match(compaction.prefixHash!, /^[0-9a-f]{12}$/);
    assert.ok(main.phux, 'the Pi main session carries a phux context stream');
    assert.deepEqual((main.phux as { messages: Array<{ seq: number }> }).messages.map((m) => m.seq), [1, 2, 3, 4, 5, 6, 7]);
  });

  it('analyze prints one row per request with hash, verdict, break and cause', async () => {
    const { code, out } = await run(['analyze']);
    assert.equal(code, 0);
    const row = out.split('\n').find((l) => /^\s+11 /.test(l))!;
    assert.match(row, /fake-claude .* break +messages\[0\] messages\[0\]\.content\[0\]\.text @84 .* history-rewritten: compaction/);
  });

  it('check exits 1 and names the breaking agent requests', async () => {
    const { code, out } = await run(['check', 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--', '--requests', 'test/fixtures/pi/long/requests']);
    assert.equal(code, 1);
    assert.match(out, /:11: request #4 breaks the cache \(system-changed\)/);
    assert.match(out, /1 request\(s\) break the cache$/);
  });

  it('a missing path is exit 2 with the path in the message; a garbage file is analyzed with a diagnostic', async () => {
    const missing = await run(['analyze', '/nonexistent/x.jsonl']);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /\/nonexistent\/x\.jsonl: no such file or directory/);
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cli-'));
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, '{"type":"session","version":3,"id":"s1","timestamp":"2026-11-30T00:00:00.000Z","cwd":"/w"}\nnot json\n');
    const bad = await run(['analyze', '--json', file]);
    assert.equal(bad.code, 0);
    const report = JSON.parse(bad.out) as Report;
    assert.equal(report.sessions[0].diagnostics[0].line, 2);
  });

  it('--html says clearly that it is not available yet', async () => {
    const { code, err } = await run(['analyze', '--html', 'x.html']);
    assert.equal(code, 2);
    assert.match(err, /not available/);
  });

  it('the built bin runs: node dist/cli.js analyze --json', async () => {
    const { execa } = await import('execa'); // ESM-only package
    const r = await execa('node', ['dist/cli.js', 'analyze', '--json'], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.equal(report.sessions[0].requests.length, 16);
  });
});
