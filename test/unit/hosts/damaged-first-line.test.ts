/**
 * A session file whose line 1 (the host's header: Codex's session_meta, PI-Desktop's and DSH's
 * `session` line) is damaged is still recognized by the lines after it — named, met in a folder
 * walk, or opened in an editor — and read with a diagnostic at line 1; it is never taken for a Pi
 * session with nothing analyzed.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '../../../src/core/model.js';
import { findSessions, openRef, recognizeFile } from '../../../src/hosts/registry.js';

const CODEX = 'test/fixtures/codex/codex/sessions/2026/12/01/rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl';
const PD = 'test/fixtures/pi-desktop/home/sessions/7c1e2f60-5d1a-4c3e-9a0b-2e4f6a8c0d11.jsonl';
const DSH = 'test/fixtures/botharness/fresh-round-trip/session.jsonl';
const CLAUDE = 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl';
const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';

/** The ways line 1 is damaged: cut short, a NUL byte before it, a session_meta whose payload is a number. */
const DAMAGES: Array<[string, (line1: string) => string]> = [
  ['cut short', () => '{"broken'],
  ['NUL byte prepended', (l) => `\u0000${l}`],
  ['payload 1e308', (l) => l.replace(/"payload":\{.*\}\}$/, '"payload":1e308}')],
];

function damaged(src: string, damage: (line1: string) => string): string {
  const lines = readFileSync(src, 'utf8').split('\n');
  lines[0] = damage(lines[0]);
  return lines.join('\n');
}

async function read(path: string): Promise<Array<{ host: string; sessions: Session[] }>> {
  const out = [];
  for (const ref of await findSessions(path)) out.push({ host: ref.host, sessions: await openRef(ref) });
  return out;
}

const line1Problems = (s: Session) => s.diagnostics.filter((d) => d.line === 1 && d.severity !== 'info').map((d) => d.message);

describe('a session whose line 1 is damaged is recognized by its next lines', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-damaged-line1-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const [what, damage] of DAMAGES) {
    it(`Codex (${what}): named under any name, walked as rollout-*.jsonl, opened in an editor: its 9 requests, line 1 reported`, async () => {
      const text = damaged(CODEX, damage);
      assert.notEqual(text, readFileSync(CODEX, 'utf8'));
      writeFileSync(join(dir, 'cx.jsonl'), text);
      const walked = join(dir, 'backup', 'sessions', '2026', '12', '01');
      mkdirSync(walked, { recursive: true });
      writeFileSync(join(walked, 'rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl'), text);
      for (const path of [join(dir, 'cx.jsonl'), join(dir, 'backup')]) {
        const got = await read(path);
        assert.deepEqual(got.map((g) => [g.host, g.sessions.map((s) => s.requests.length)]), [['codex', [9]]], path);
        const problems = line1Problems(got[0].sessions[0]);
        assert.ok(problems.includes(`no session_meta line: instructions unknown, session id from the file name: ${path.endsWith('backup') ? '01a23123-dcf1-7130-9f87-2b10ef481a1c' : 'cx'}`), problems.join('\n'));
        assert.ok(problems.length >= 2, `line 1 itself is reported: ${problems.join('\n')}`);
      }
      assert.deepEqual((await recognizeFile(join(walked, 'rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl'))).map((r) => r.host), ['codex']);
    });
  }

  it('PI-Desktop (line 1 cut short, or a NUL byte before it): named, and walked in its sessions/ folder: every request of the intact transcript', async () => {
    const intact = (await read(PD)).flatMap((g) => g.sessions.map((s) => s.requests.length));
    for (const [what, damage] of DAMAGES.slice(0, 2)) {
      const sessions = join(dir, what.replace(/\W/g, '-'), 'sessions');
      mkdirSync(sessions, { recursive: true });
      const file = join(sessions, '7c1e2f60-5d1a-4c3e-9a0b-2e4f6a8c0d11.jsonl');
      writeFileSync(file, damaged(PD, damage));
      for (const path of [file, join(dir, what.replace(/\W/g, '-'))]) {
        const got = await read(path);
        assert.deepEqual(got.map((g) => [g.host, g.sessions.map((s) => s.requests.length)]), [['pi-desktop', intact]], `${what}: ${path}`);
        assert.equal(got[0].sessions[0].id, '7c1e2f60-5d1a-4c3e-9a0b-2e4f6a8c0d11');
        assert.match(line1Problems(got[0].sessions[0]).join('\n'), /malformed JSON line skipped/);
      }
    }
  });

  it('BotHarness raw session.jsonl (line 1 cut short): named, as its sessions/<id>/ folder, and walked: the intact log\'s requests', async () => {
    const intact = (await read(DSH)).flatMap((g) => g.sessions.map((s) => s.requests.length));
    assert.deepEqual(intact, [2]);
    const folder = join(dir, 'sessions', 'abc');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'session.jsonl'), damaged(DSH, DAMAGES[0][1]));
    for (const path of [join(folder, 'session.jsonl'), folder, dir]) {
      const got = await read(path);
      assert.deepEqual(got.map((g) => [g.host, g.sessions[0].id, g.sessions.map((s) => s.requests.length)]), [['botharness', 'abc', intact]], path);
      assert.match(line1Problems(got[0].sessions[0]).join('\n'), /malformed JSON line skipped/);
    }
  });

  it('Claude Code and Pi with line 1 cut short keep their host and their requests (12 and 13)', async () => {
    for (const [src, host, n] of [[CLAUDE, 'claude-code', 12], [PI, 'pi', 13]] as const) {
      const file = join(dir, `${host}.jsonl`);
      writeFileSync(file, damaged(src, DAMAGES[0][1]));
      const got = await read(file);
      assert.deepEqual(got.map((g) => [g.host, g.sessions[0].requests.length]), [[host, n]]);
    }
  });
});
