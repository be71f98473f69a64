/**
 * The CLI main job on the bundled examples and on bad input: the built bin (dist/cli.js, made by
 * `npm test`'s build step) and the in-process entry point.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCli } from '../../runCli.js';
import type { Report } from '../../../src/report/json.js';

const LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';
const PI_MAIN = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';

const run = runCli;

describe('prefix-lens CLI', () => {
  it('analyze --json --examples reports the bundled examples (Pi main in wire mode first)', async () => {
    const { code, out } = await run(['analyze', '--json', '--examples']);
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
      [11, 33, 'agent', 'break', 'messages', 0, 90],
    );
    assert.equal(compaction.causes[0].kind, 'history-rewritten');
    assert.equal(compaction.prefixHash, 'fb7f2238d3b2');
    assert.ok(main.phux, 'the Pi main session carries a phux context stream');
    assert.deepEqual(main.phux?.messages.map((m) => m.seq), [1, 2, 3, 4, 5, 6, 7]);
  });

  it('analyze prints one row per request with hash, verdict, break and cause', async () => {
    const { code, out } = await run(['analyze', '--examples']);
    assert.equal(code, 0);
    // The compaction request is agent request #9 (after the two summary requests #8.1 and #8.2).
    const row = out.split('\n').find((l) => /^\s+9 /.test(l))!;
    assert.match(row, /claude-sonnet-4-5 .* break +message 0 @90 .* history-rewritten: compaction/);
    const lines = out.split('\n');
    assert.equal(lines[lines.indexOf(row) + 1].trim(), 'at messages[0].content[0].text (vs #8); read 1531, ~1525 expected up to the change');
  });

  it('check exits 1 and names the breaking agent requests', async () => {
    const { code, out } = await run(['check', LONG, '--requests', 'test/fixtures/pi/long/requests']);
    assert.equal(code, 1);
    assert.match(out, /\.jsonl:11: pi session 01a230ec-991a-7497-9a50-b9f4f6517541 request #4 breaks the cache \(system-changed\)/);
    assert.match(out, /1 request breaks the cache$/);
  });

  it('check prints a file name with control characters made visible', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cli-'));
    try {
      const file = join(dir, 'evil\u001b[31m.jsonl');
      copyFileSync(readdirSync(LONG).map((f) => join(LONG, f))[0], file);
      const { code, out } = await run(['check', file, '--requests', 'test/fixtures/pi/long/requests']);
      assert.equal(code, 1);
      assert.ok(!out.includes('\u001b'), 'no escape sequence reaches the terminal');
      assert.match(out, /evil·\[31m\.jsonl:11: pi session .* request #4 breaks the cache/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a missing path is exit 2 with the path in the message; a garbage file is analyzed with a diagnostic', async () => {
    const missing = await run(['analyze', '/nonexistent/x.jsonl']);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /\/nonexistent\/x\.jsonl: no such file or directory/);
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cli-'));
    const file = join(dir, 'bad.jsonl');
    // The recorded long session with a garbage line inserted after its header.
    const recorded = readFileSync(readdirSync(LONG).map((f) => join(LONG, f))[0], 'utf8').split('\n');
    writeFileSync(file, [recorded[0], 'not json', ...recorded.slice(1)].join('\n'));
    const bad = await run(['analyze', '--json', file]);
    assert.equal(bad.code, 0);
    const report = JSON.parse(bad.out) as Report;
    assert.equal(report.sessions[0].diagnostics[0].line, 2);
    assert.equal(report.sessions[0].requests.length, 8);
    assert.equal(report.sessions[0].requests[0].line, 6);
  });

  it('check exits 2 on input it cannot read, so a CI gate never passes on garbage', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cli-'));
    const file = join(dir, 'garbage.jsonl');
    writeFileSync(file, 'not json at all\nstill not json\n');
    const r = await run(['check', file]);
    assert.equal(r.code, 2);
    assert.match(r.err, /garbage\.jsonl:1: /);
    assert.match(r.err, /1 input could not be read or held no session/);
    assert.equal((await run(['analyze', file])).code, 2);
  });

  it('a closed pipe ends the output quietly', async () => {
    const { execa } = await import('execa'); // ESM-only package
    const r = await execa('sh', ['-c', 'node dist/cli.js analyze --examples | head -1'], { reject: false });
    assert.equal(r.stdout.split('\n').length, 1);
    assert.equal(r.stderr, '');
  });

  it('--version prints the package version on stdout', async () => {
    const r = await run(['--version']);
    assert.deepEqual([r.code, r.out], [0, (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version]);
    assert.match(r.out, /^\d+\.\d+\.\d+$/);
  });

  it('--help prints the usage on stdout', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /^usage:/);
  });

  it('pi:<id prefix> finds sessions where Pi keeps them; pi: alone is the newest', async () => {
    const saved = process.env.PI_CODING_AGENT_DIR;
    process.env.PI_CODING_AGENT_DIR = 'test/fixtures/pi/main/agent';
    try {
      const r = await run(['analyze', '--json', 'pi:01a230ec-9a4e']);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual((JSON.parse(r.out) as Report).sessions.map((s) => [s.id, s.requests.length]), [['01a230ec-9a4e-7417-8af1-68d34234bdc8', 13]]);
      assert.equal((await run(['analyze', '--json', 'pi:'])).code, 0);
      const none = await run(['analyze', 'pi:zzz']);
      assert.equal(none.code, 2);
      assert.equal(none.err, 'prefix-lens: pi:zzz: no Pi session whose id starts with "zzz" in test/fixtures/pi/main/agent/sessions (1 session there; PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR set where to look)');
    } finally {
      if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
      else process.env.PI_CODING_AGENT_DIR = saved;
    }
  });

  it('opencode:<sessionID> reads that session from OPENCODE_DB', async () => {
    const saved = process.env.OPENCODE_DB;
    process.env.OPENCODE_DB = resolve('test/fixtures/opencode/opencode.db'); // relative = to the data dir, as OpenCode reads it
    try {
      const r = await run(['analyze', '--json', 'opencode:ses_dcf113f82ffe0AQvhG5Km2IW6u', '--requests', 'test/fixtures/opencode/requests']);
      assert.equal(r.code, 0, r.err);
      const report = JSON.parse(r.out) as Report;
      assert.deepEqual(report.sessions.map((s) => [s.host, s.id, s.requests.length]), [['opencode', 'ses_dcf113f82ffe0AQvhG5Km2IW6u', 6]]);
      const fleetChange = report.sessions[0].requests[4];
      assert.deepEqual(fleetChange.causes.map((c) => c.kind), ['system-changed', 'phux-context-in-head']);
    } finally {
      if (saved === undefined) delete process.env.OPENCODE_DB;
      else process.env.OPENCODE_DB = saved;
    }
  });

  it('--html FILE writes one self-contained report whose data element holds the --json report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cli-'));
    try {
      const file = join(dir, 'report.html');
      const { code, err } = await run(['analyze', '--examples', '--html', file]);
      assert.equal(code, 0, err);
      assert.match(err, /wrote the timeline of 11 sessions, 85 requests to .*report\.html/);
      const html = readFileSync(file, 'utf8');
      const json = JSON.parse((await run(['analyze', '--examples', '--json'])).out) as Report;
      const data = html.match(/<script type="application\/json" id="prefix-lens-report">([^]*?)<\/script>/)![1];
      assert.deepEqual(JSON.parse(data), json);
      assert.doesNotMatch(data, /</, 'every < of the data is escaped');
      // Nothing remote: no http(s) URL is loaded, and the CSP forbids everything but the inlined assets.
      assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'sha256-[^']+'; script-src 'sha256-[^']+'; img-src data:">/);
      assert.doesNotMatch(html, /<(link|img|iframe)\b|src="http/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--html works for every input analyze accepts: the data element holds what --json prints', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cli-'));
    try {
      const piFile = join(PI_MAIN, readdirSync(PI_MAIN).find((f) => f.endsWith('.jsonl'))!);
      const first = JSON.parse((await run(['analyze', 'test/fixtures/opencode/opencode.db', '--json'])).out) as Report;
      const cases: Array<[string, string[], number[]]> = [
        ['Pi session file (reconstructed)', [piFile], [13]],
        ['Pi session folder with --requests (wire)', [PI_MAIN, '--requests', 'test/fixtures/pi/main/requests'], [16]],
        ['OpenCode data dir', ['test/fixtures/opencode'], first.sessions.map((s) => s.requests.length)],
        ['opencode.db', ['test/fixtures/opencode/opencode.db'], first.sessions.map((s) => s.requests.length)],
        [`opencode:<id>`, [`opencode:${first.sessions[0].id}`], [first.sessions[0].requests.length]],
        ['captured bodies folder', ['test/fixtures/pi/main/requests'], [16]],
      ];
      for (const [name, args, counts] of cases) {
        const file = join(dir, 'r.html');
        const env = args[0].startsWith('opencode:') ? { OPENCODE_DB: resolve('test/fixtures/opencode/opencode.db') } : {};
        const saved = { ...process.env };
        Object.assign(process.env, env);
        try {
          const h = await run(['analyze', ...args, '--html', file]);
          assert.equal(h.code, 0, `${name}: ${h.err}`);
          const j = await run(['analyze', ...args, '--json']);
          const data = readFileSync(file, 'utf8').match(/<script type="application\/json" id="prefix-lens-report">([^]*?)<\/script>/)![1];
          const report = JSON.parse(data) as Report;
          assert.deepEqual(report, JSON.parse(j.out), name);
          assert.deepEqual(report.sessions.map((s) => s.requests.length), counts, name);
        } finally {
          process.env = saved;
        }
      }
      assert.deepEqual(first.sessions.map((s) => s.requests.length), [6, 5, 1, 9, 8, 5]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--html - writes the report to stdout; an unwritable FILE is a usage error (2)', async () => {
    const { code, out } = await run(['analyze', PI_MAIN, '--html', '-']);
    assert.equal(code, 0);
    assert.match(out, /^<!DOCTYPE html>/);
    assert.doesNotMatch(out, /^ +1 08:58:45/m, 'no terminal table in the HTML');
    const bad = await run(['analyze', PI_MAIN, '--html', '/nonexistent-dir/x.html']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--html \/nonexistent-dir\/x\.html: ENOENT/);
  });

  it('the built bin runs: node dist/cli.js analyze --json --examples', async () => {
    const { execa } = await import('execa'); // ESM-only package
    const r = await execa('node', ['dist/cli.js', 'analyze', '--json', '--examples'], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.equal(report.sessions[0].requests.length, 16);
  });
});
