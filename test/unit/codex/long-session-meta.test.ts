/**
 * Codex writes its whole instructions text and `dynamic_tools` (every MCP tool's schema) into the
 * session_meta line (reference/claude-code-codex.md §2.1), so line 1 of a rollout has no bound of
 * its own. Discovery peeked at a 64 KiB head window and took a rollout whose line 1 did not end in
 * it for no rollout at all: the session was left out of the listing, a walk and `codex:` without a
 * word. Now a longer line 1 is read with a window that holds it (up to 4 MiB: id, cwd, first
 * prompt, fork parent as for any rollout), and one longer still is recognized by its start and
 * read in full by the reader.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeRefUncached } from '../../../src/cache/results.js';
import { discoverSessions, findSessions, type SessionRef } from '../../../src/hosts/registry.js';

const DAY = 'sessions/2026/12/01';
const NAME = 'rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl';
const ID = '01a23123-dcf1-7130-9f87-2b10ef481a1c';
const TEXT = readFileSync(join('test/fixtures/codex/codex', DAY, NAME), 'utf8');

/** The recorded rollout with `n` MCP tools of ~1 KB schema each in its session_meta's dynamic_tools (the reader does not use them). */
function withTools(n: number): string {
  const lines = TEXT.split('\n');
  const meta = JSON.parse(lines[0]) as { payload: Record<string, unknown> };
  meta.payload.dynamic_tools = Array.from({ length: n }, (_, i) => ({ name: `mcp__docs__tool_${i}`, description: 'Looks up a page of the docs. '.repeat(20), input_schema: { type: 'object', properties: { query: { type: 'string', description: 'What to look for.'.repeat(10) } } } }));
  lines[0] = JSON.stringify(meta);
  return lines.join('\n');
}

describe('Codex discovery: a session_meta line longer than the head window is a rollout, not skipped', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-codex-meta-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const place = (text: string) => {
    const home = join(dir, 'codex');
    mkdirSync(join(home, DAY), { recursive: true });
    writeFileSync(join(home, DAY, NAME), text);
    return home;
  };
  const listed = async (home: string) => (await discoverSessions({ env: { CODEX_HOME: home }, home: dir })).filter((r) => r.host === 'codex');
  const facts = (r: SessionRef) => [r.id, r.project, r.firstPrompt?.slice(0, 40) ?? null];
  const requests = async (r: SessionRef) => (await analyzeRefUncached(r))[0].requests.map((q) => q.verdict);

  it('the recorded rollout as it is: line 1 of 21,847 bytes (the reference for the cases below)', async () => {
    const refs = await listed(place(TEXT));
    assert.deepEqual(refs.map(facts), [[ID, '/tmp/prefix-lens-codex-lab/project', 'Hello codex. Say hi.']]);
    assert.equal((await requests(refs[0])).length, 9);
  });

  it('line 1 of ~150 KB (150 MCP tools): listed, walked and named with its id, cwd and first prompt; its 9 requests as recorded', async () => {
    const text = withTools(150);
    assert.ok(Buffer.byteLength(text.slice(0, text.indexOf('\n'))) > 64 * 1024);
    const home = place(TEXT);
    const base = await requests((await listed(home))[0]);
    writeFileSync(join(home, DAY, NAME), text);
    const expected = [[ID, '/tmp/prefix-lens-codex-lab/project', 'Hello codex. Say hi.']];
    const refs = await listed(home);
    assert.deepEqual(refs.map(facts), expected);
    assert.deepEqual((await findSessions(home)).map(facts), expected);
    assert.deepEqual((await findSessions(join(home, DAY, NAME))).map(facts), expected);
    assert.deepEqual(await requests(refs[0]), base);
    assert.deepEqual((await analyzeRefUncached(refs[0]))[0].diagnostics, []);
  });

  it('line 1 of ~5 MB (5,000 MCP tools, beyond the longer window): listed by its start, id from the file name, read in full', async () => {
    const text = withTools(5000);
    assert.ok(Buffer.byteLength(text.slice(0, text.indexOf('\n'))) > 4 * 1024 * 1024);
    const home = place(text);
    const refs = await listed(home);
    assert.deepEqual(refs.map(facts), [[ID, null, null]]);
    assert.equal((await requests(refs[0])).length, 9);
    assert.deepEqual((await analyzeRefUncached(refs[0]))[0].diagnostics, []);
    // Not any long line: a file whose line 1 is no session_meta stays no rollout.
    writeFileSync(join(home, DAY, NAME), `{"timestamp":"2026-12-01T10:26:03.717Z","type":"response_item","payload":{"x":"${'a'.repeat(5 * 1024 * 1024)}"}}\n`);
    assert.deepEqual(await listed(home), []);
  });
});
