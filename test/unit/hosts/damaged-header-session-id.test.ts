/**
 * A Pi session or Codex rollout whose header line (Pi's `{"type":"session",…}`, Codex's
 * session_meta) is cut short keeps the session id of the intact file: the UUID its file name ends
 * with (`<ISO time>_<uuid>.jsonl`, `rollout-<time>-<uuid>.jsonl`), not the whole file-name stem.
 * So `pi:<id prefix>` / `codex:<id prefix>`, the requests' cache key and the extension's refs name
 * it as they name the intact file; line 1 is still reported.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Session } from '../../../src/core/model.js';
import { fileRef } from '../../../src/extension/fileRef.js';
import { codexIdOfFile } from '../../../src/hosts/codex/locate.js';
import { piSessionIdOfFile } from '../../../src/hosts/pi/locate.js';
import { findSessions, openRef, resolveArg } from '../../../src/hosts/registry.js';

const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';
const PI_ID = '01a230ec-9a4e-7417-8af1-68d34234bdc8';
const CODEX = 'test/fixtures/codex/codex/sessions/2026/12/01/rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl';
const CODEX_ID = '01a23123-dcf1-7130-9f87-2b10ef481a1c';

/** `src` with line 1 replaced by `line1`. */
function withLine1(src: string, line1: string): string {
  const lines = readFileSync(src, 'utf8').split('\n');
  lines[0] = line1;
  return lines.join('\n');
}

async function sessionsAt(path: string): Promise<Session[]> {
  const out: Session[] = [];
  for (const ref of await findSessions(path)) out.push(...(await openRef(ref)));
  return out;
}

describe('a damaged header: the session id comes from the file name', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-damaged-header-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('the id rules: the UUID after Pi\'s `<time>_` and Codex\'s `rollout-<time>-`; any other name is its stem', () => {
    assert.equal(piSessionIdOfFile(PI), PI_ID);
    assert.equal(piSessionIdOfFile('/x/my_notes.jsonl'), 'my_notes');
    assert.equal(piSessionIdOfFile('2026-12-01T09-25-42-095Z.jsonl'), '2026-12-01T09-25-42-095Z');
    assert.equal(codexIdOfFile(CODEX), CODEX_ID);
    assert.equal(codexIdOfFile('/x/rollout-notes.jsonl'), 'rollout-notes');
    assert.equal(codexIdOfFile('cx.jsonl'), 'cx');
  });

  it('Pi, header cut to `{"type":"session","versi`: named, walked and as pi:01a230ec, id and cache keys of the intact file, lines 1-2 reported', async () => {
    const agent = join(dir, 'agent');
    const sessions = join(agent, 'sessions', '--home-user-pi-lab-main-project--');
    mkdirSync(sessions, { recursive: true });
    const file = join(sessions, basename(PI));
    writeFileSync(file, withLine1(PI, '{"type":"session","versi'));
    const [intact] = await sessionsAt(PI);
    assert.equal(intact.id, PI_ID);
    const keys = intact.requests.map((r) => r.cacheKey ?? null);
    assert.equal(keys.filter((k) => k === PI_ID).length, 2, 'the two openai-responses requests carry the session id');

    const refs = await resolveArg('pi:01a230ec', { env: { PI_CODING_AGENT_DIR: agent }, home: '/nohome' });
    assert.deepEqual(refs.map((r) => [r.path, r.id]), [[file, PI_ID]]);
    for (const path of [file, dir]) {
      const got = await sessionsAt(path);
      assert.deepEqual(got.map((s) => [s.host, s.id, s.requests.length]), [['pi', PI_ID, 13]], path);
      assert.deepEqual(got[0].requests.map((r) => r.cacheKey ?? null), keys);
      assert.deepEqual(got[0].diagnostics.map((d) => [d.file, d.line, d.severity, d.message]), [
        [file, 1, 'error', 'malformed JSON line skipped: Unterminated string in JSON at position 24'],
        [file, 2, 'error', `first line is not a Pi session header ({"type":"session",…}); Pi would treat the file as invalid. Reading the entries anyway, session id from the file name: ${PI_ID}`],
      ]);
    }
    // The extension's ref of a file opened by hand: the same rule.
    assert.equal(fileRef(file, { mtimeMs: 0, size: 0 }).id, PI_ID);
    assert.equal(fileRef('/x/my_notes.jsonl', { mtimeMs: 0, size: 0 }).id, 'my_notes');
  });

  it('Codex, session_meta cut short: walked and as codex:01a23123, the conversation id and cache key of the intact rollout', async () => {
    const day = join(dir, 'codex', 'sessions', '2026', '12', '01');
    mkdirSync(day, { recursive: true });
    const file = join(day, basename(CODEX));
    writeFileSync(file, withLine1(CODEX, '{"timestamp":"2026-12-01T10:26:03.5'));
    const [intact] = await sessionsAt(CODEX);
    assert.equal(intact.id, CODEX_ID);
    assert.deepEqual([...new Set(intact.requests.map((r) => r.cacheKey))], [CODEX_ID]);

    const refs = await resolveArg('codex:01a23123', { env: { CODEX_HOME: join(dir, 'codex') }, home: '/nohome' });
    assert.deepEqual(refs.map((r) => [r.path, r.id]), [[file, CODEX_ID]]);
    const got = await sessionsAt(join(dir, 'codex'));
    assert.deepEqual(got.map((s) => [s.host, s.id, s.requests.length]), [['codex', CODEX_ID, 9]]);
    assert.deepEqual([...new Set(got[0].requests.map((r) => r.cacheKey))], [CODEX_ID]);
    assert.deepEqual(
      got[0].diagnostics.filter((d) => d.line === 1).map((d) => [d.file, d.severity, d.message]),
      [
        [file, 'error', 'malformed JSON line skipped: Unterminated string in JSON at position 35'],
        [file, 'warning', `no session_meta line: instructions unknown, session id from the file name: ${CODEX_ID}`],
      ],
    );
  });
});
