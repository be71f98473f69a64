/**
 * Captured bodies that carry no session header (no capture proxy `sessionId`, no
 * `x-claude-code-session-id` / `x-session-id` / `session-id`) in a capture folder: never a session
 * per body, never dropped. A Codex body whose thread id is a conversation other bodies name with
 * the header is read with it (it was a false "sub-agent" of its own session); one naming nothing
 * goes with the folder's first conversation; either says so in a note. Real recorded bodies, with
 * the header taken out of their meta.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSessions } from '../../../src/hosts/capture/index.js';

const OPENCODE = 'test/fixtures/opencode-capture/captures';
const OC_A = 'session-ses_dcdcb8c7dffevesogVf8WzwkcR';
const OC_B = 'session-ses_dcdc9b833ffegPxlqBVR4iOzp5';
const CODEX_AGENTS = 'test/fixtures/codex-agents/requests';
const NO_HEADER = 'no session header (capture proxy sessionId, x-claude-code-session-id, x-session-id, session-id)';

/** Removes every session header (and the proxy's `sessionId`) from a body's `.meta.json`. */
function stripSessionHeader(metaFile: string): void {
  const m = JSON.parse(readFileSync(metaFile, 'utf8')) as { sessionId?: string; sessionHeader?: string; headers?: Record<string, string> };
  delete m.sessionId;
  delete m.sessionHeader;
  for (const h of ['x-claude-code-session-id', 'x-session-id', 'x-session-affinity', 'session-id', 'session_id']) delete m.headers?.[h];
  writeFileSync(metaFile, JSON.stringify(m, null, 2));
}

/** Each session as [id, parentId, "file:verdict" per request], and the notes by body file. */
async function judged(dir: string) {
  const sessions = await readCaptureSessions(dir);
  const notes: Record<string, string[]> = {};
  const table = sessions.map((s) => {
    for (const r of s.requests) if (r.notes?.length) notes[r.source.file.slice(dir.length + 1)] = r.notes;
    const a = analyzeSession(s);
    return [s.id, s.parentId ?? null, a.requests.map((r) => `${r.request.source.file.slice(dir.length + 1, dir.length + 7)}:${r.verdict}`).join(' ')];
  });
  return { table, notes };
}

describe('captured bodies without a session header', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-no-session-header-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('OpenCode: bodies 3 and 4 without x-session-id stay in their session (10 requests, the intact verdicts), each with a note', async () => {
    const intact = await judged(join(OPENCODE, OC_A));
    const folder = join(dir, OC_A);
    cpSync(join(OPENCODE, OC_A), folder, { recursive: true });
    for (const n of ['000003', '000004']) stripSessionHeader(join(folder, `${n}-openai-completions.meta.json`));
    const got = await judged(folder);
    assert.deepEqual(got.table, intact.table);
    assert.deepEqual(got.table.map((t) => t[2]), ['000001:below-minimum 000002:cold 000003:hit 000004:hit 000005:hit 000006:below-minimum 000007:break 000008:hit 000009:below-minimum 000010:break']);
    const note = `${NO_HEADER}: read with the folder's first conversation (ses_dcdcb8c7dffevesogVf8WzwkcR), as every body that names none`;
    assert.deepEqual(got.notes, { '000003-openai-completions.body.json': [note], '000004-openai-completions.body.json': [note] });
  });

  it('two OpenCode sessions and bare bodies (no meta at all) in one folder: the two sessions, the bare bodies in the first', async () => {
    // Session B's bodies as 1xxxxx (sent after A's), two of A's bodies without their meta.
    cpSync(join(OPENCODE, OC_A), dir, { recursive: true });
    for (const n of readdirSync(join(OPENCODE, OC_B))) cpSync(join(OPENCODE, OC_B, n), join(dir, n.replace(/^0/, '1')));
    for (const n of ['000009', '000010']) unlinkSync(join(dir, `${n}-openai-completions.meta.json`));
    const got = await judged(dir);
    assert.deepEqual(got.table.map((t) => [t[0], t[1], (t[2] as string).split(' ').length]), [
      [dir.slice(dir.lastIndexOf('/') + 1), null, 10],
      ['ses_dcdc9b833ffegPxlqBVR4iOzp5', null, 6],
    ]);
    const note = `${NO_HEADER}: read with the folder's first conversation (ses_dcdcb8c7dffevesogVf8WzwkcR), as every body that names none`;
    assert.deepEqual(got.notes, { '000009-openai-completions.body.json': [note], '000010-openai-completions.body.json': [note] });
  });

  it('only bare bodies (no meta): one session of all of them, no note (nothing else named)', async () => {
    for (const n of readdirSync(join(OPENCODE, OC_A)).filter((n) => n.endsWith('.body.json'))) cpSync(join(OPENCODE, OC_A, n), join(dir, n));
    const sessions = await readCaptureSessions(dir);
    assert.deepEqual(sessions.map((s) => [s.requests.length, s.requests.flatMap((r) => r.notes ?? [])]), [[10, []]]);
  });

  it('Codex: parent bodies 002 and 003 without session-id are the parent\'s (their thread id is its id), not a sub-agent session of their own', async () => {
    const intact = await judged(CODEX_AGENTS);
    cpSync(CODEX_AGENTS, dir, { recursive: true });
    for (const n of ['002', '003']) stripSessionHeader(join(dir, `${n}-openai-responses.meta.json`));
    const got = await judged(dir);
    assert.deepEqual(
      got.table.map((t) => t.slice(1)),
      intact.table.map((t) => t.slice(1).map((x) => (x === 'requests' ? dir.slice(dir.lastIndexOf('/') + 1) : x))),
    );
    assert.deepEqual(got.table.map((t) => t[2]), ['001-op:cold 002-op:hit 003-op:hit 005-op:hit', '004-op:cold', '006-op:cold 007-op:break']);
    const note = `${NO_HEADER}: read with session 01a231c4-7b9f-70b3-9be5-8568513de12f, the conversation its thread id names`;
    assert.deepEqual(got.notes, { '002-openai-responses.body.json': [note], '003-openai-responses.body.json': [note] });
  });

  it('Codex: the sub-agent\'s body without session-id is still the sub-agent (its thread id names it)', async () => {
    cpSync(CODEX_AGENTS, dir, { recursive: true });
    // Another body of the sub-agent thread with the header, so the folder names it.
    cpSync(join(dir, '004-openai-responses.body.json'), join(dir, '004b-openai-responses.body.json'));
    cpSync(join(dir, '004-openai-responses.meta.json'), join(dir, '004b-openai-responses.meta.json'));
    stripSessionHeader(join(dir, '004b-openai-responses.meta.json'));
    const got = await judged(dir);
    assert.deepEqual(got.table.map((t) => [t[0], t[2]]), [
      [dir.slice(dir.lastIndexOf('/') + 1), '001-op:cold 002-op:hit 003-op:hit 005-op:hit'],
      // The copy reports the original's usage (no read): not a hit, but judged in the sub-agent's lineage.
      ['01a231c4-8690-71b3-9bda-f86ba8c8c9e6', '004-op:cold 004b-o:unexplained-miss'],
      ['01a231c4-8c57-7e42-bdd1-a6aa99bf54c4', '006-op:cold 007-op:break'],
    ]);
    assert.deepEqual(got.notes, {
      '004b-openai-responses.body.json': [`${NO_HEADER}: read with sub-agent 01a231c4-8690-71b3-9bda-f86ba8c8c9e6 of session 01a231c4-7b9f-70b3-9be5-8568513de12f, as its bodies that carry one`],
    });
  });
});
