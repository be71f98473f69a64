import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { LiveAnalysis } from '../../../src/live/session.js';
import { sessionReport, type SessionReport } from '../../../src/report/json.js';
import { main } from '../../../src/cli/main.js';

const LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';
const FIXTURE = join(LONG, readdirSync(LONG)[0]);

/**
 * What the newcomer appended to a copy of the recorded long Pi session (20 lines): a line that is
 * not JSON (21), one more turn (22–23, a request), an entry with an unknown parent and a timestamp
 * that is no time (24), and a line starting with ESC (25).
 */
function appended(): string {
  const lines = readFileSync(FIXTURE, 'utf8').trimEnd().split('\n');
  const user = JSON.parse(lines[18]) as Record<string, unknown>;
  const assistant = JSON.parse(lines[19]) as Record<string, unknown>;
  return [
    'not json at all',
    JSON.stringify({ ...user, id: 'e1000001', parentId: assistant.id, timestamp: '2026-12-01T09:26:10.000Z' }),
    JSON.stringify({ ...assistant, id: 'e1000002', parentId: 'e1000001', timestamp: '2026-12-01T09:26:11.000Z' }),
    JSON.stringify({ ...user, id: 'e1000003', parentId: 'nosuchparent', timestamp: 'yesterday' }),
    '\u001b[31m{"type":"x"}',
  ].join('\n') + '\n';
}

/** The diagnostics a full read of the grown file gives (in the report's order). */
const grownDiagnostics = (file: string) => [
  { file, line: 21, message: `malformed JSON line skipped: Unexpected token 'o', "not json at all" is not valid JSON`, severity: 'error' },
  { file, line: 24, message: 'values taken as unknown: timestamp "yesterday" is not a time (a date string)', severity: 'warning' },
  { file, line: 25, message: `malformed JSON line skipped: Unexpected token '\u001b', "\u001b[31m{"type":"x"}" is not valid JSON`, severity: 'error' },
  { file, line: 24, message: 'parentId nosuchparent not found; entry treated as a root (its context starts here)', severity: 'warning' },
];

/** Runs `analyze --watch` on `file` until `done` says the output is complete; returns stdout. */
async function watchUntil(args: string[], env: NodeJS.ProcessEnv, onStart: () => void, done: (out: string) => boolean): Promise<string> {
  const { execa } = await import('execa'); // ESM-only package
  const child = execa('node', ['dist/cli.js', 'analyze', '--watch', ...args], { reject: false, buffer: false, env });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  let errText = '';
  child.stderr!.on('data', (d: Buffer) => (errText += d.toString()));
  const waitFor = (ok: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${out}`)), 30_000);
      const check = () => (ok() ? (clearTimeout(t), resolve()) : setTimeout(check, 20));
      check();
    });
  try {
    // Text says so on stderr; --json's first line is the session event.
    await waitFor(() => errText.includes('watching') || out.includes('\n'), 'the watch to start');
    onStart();
    await waitFor(() => done(out), 'the appended lines');
    // Anything printed late would show in the exact comparisons below.
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    child.kill('SIGINT');
  }
  assert.equal((await child).exitCode, 0);
  return out;
}

describe('analyze --watch reports the diagnostics of appended lines', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-watch-diag-'));
    file = join(dir, 's.jsonl');
    copyFileSync(FIXTURE, file);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('LiveAnalysis: an update gives the appended lines\' diagnostics, those of a full read; a half-written line\'s once its newline is there', async () => {
    const [ref] = await findSessions(file);
    const live = await LiveAnalysis.open(ref);
    assert.deepEqual(live.report.diagnostics, []);
    appendFileSync(file, appended());
    const u = await live.update();
    assert.equal(u.change, 'appended');
    assert.deepEqual(u.added.map((r) => r.number), ['9']);
    const full = sessionReport(analyzeSession(await readPiSession(file)));
    assert.deepEqual(full.diagnostics, grownDiagnostics(file));
    assert.deepEqual(u.diagnostics, full.diagnostics);
    assert.deepEqual((await live.update()).diagnostics, []);
    // Being written: a full read says it does not parse, the watch waits for the newline.
    appendFileSync(file, '{"type":"message","id":"half');
    const half = await live.update();
    assert.deepEqual(half.diagnostics, []);
    assert.equal(live.report.diagnostics.length, 5);
    appendFileSync(file, '\n');
    const whole = await live.update();
    assert.deepEqual(whole.diagnostics, [
      { file, line: 26, message: 'malformed JSON line skipped: Unterminated string in JSON at position 28', severity: 'error' },
    ]);
    assert.deepEqual(live.report.diagnostics, sessionReport(analyzeSession(await readPiSession(file))).diagnostics);
  });

  it('text: the new request, then each diagnostic as the full report lists it, escaped', async function () {
    this.timeout(60_000);
    const out = await watchUntil([file], { XDG_CACHE_HOME: join(dir, 'cache') }, () => appendFileSync(file, appended()), (o) => o.includes('parentId nosuchparent'));
    const before = out.slice(0, out.indexOf('totals:'));
    const after = out.slice(out.indexOf('\n', out.indexOf('totals:')) + 1).split('\n').filter((l) => l);
    assert.equal(after.length, 5, after.join('\n'));
    assert.match(after[0], /^ {3}9 09:26:05 gpt-5-codex /);
    assert.deepEqual(after.slice(1), [
      `  error: ${file}:21: malformed JSON line skipped: Unexpected token 'o', "not json at all" is not valid JSON`,
      `  warning: ${file}:24: values taken as unknown: timestamp "yesterday" is not a time (a date string)`,
      `  error: ${file}:25: malformed JSON line skipped: Unexpected token '·', "·[31m{"type":"x"}" is not valid JSON`,
      `  warning: ${file}:24: parentId nosuchparent not found; entry treated as a root (its context starts here)`,
    ]);
    assert.ok(before.includes('8 requests'));
    // The same lines as the full report of the grown file prints under its table.
    const lines: string[] = [];
    assert.equal(await main(['analyze', '--no-cache', file], (l) => void lines.push(...l.split('\n')), () => {}), 0);
    assert.deepEqual(lines.filter((l) => /^ {2}(error|warning): /.test(l)), after.slice(1));
  });

  it('--json: one `diagnostic` event per diagnostic, after the request, equal to the full report\'s', async function () {
    this.timeout(60_000);
    const out = await watchUntil(['--json', file], { XDG_CACHE_HOME: join(dir, 'cache') }, () => appendFileSync(file, appended()), (o) => o.includes('nosuchparent'));
    const events = out.trimEnd().split('\n').map((l) => JSON.parse(l) as { event: string; session?: string; path?: string; report?: SessionReport; diagnostic?: unknown });
    assert.deepEqual(events.map((e) => e.event), ['session', 'request', 'diagnostic', 'diagnostic', 'diagnostic', 'diagnostic']);
    assert.deepEqual(events[0].report!.diagnostics, []);
    const id = events[0].report!.id;
    assert.deepEqual(
      events.slice(2),
      grownDiagnostics(file).map((diagnostic) => ({ event: 'diagnostic', session: id, path: file, diagnostic })),
    );
    assert.equal(out.split('\n')[4], JSON.stringify(events[4]));
  });
});
