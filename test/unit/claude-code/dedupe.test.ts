/**
 * Requests from the transcript lines of Claude Code versions that write no `api-request` lines
 * (1.0.x–2.1.1xx, reference/claude-code-codex.md §1.3): one request per (message.id, requestId),
 * by message.id alone without requestId (gateways), the final output count, progress copies of
 * sub-agent responses counted once, rewound branches counted, API error entries. These line
 * shapes are the ones the reference documents for those versions; the recordings here are 2.1.328.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { messageCount } from '../pi/helpers.js';

const SID = '11111111-2222-4333-8444-555555555555';
let t = Date.parse('2026-11-01T10:00:00.000Z');
const base = (uuid: string, parentUuid: string | null) => ({ uuid, parentUuid, sessionId: SID, cwd: '/work/demo', version: '2.1.100', timestamp: new Date((t += 1000)).toISOString() });
const user = (uuid: string, parent: string | null, content: unknown) => ({ type: 'user', ...base(uuid, parent), message: { role: 'user', content } });
const usage = (out: number) => ({ input_tokens: 3, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: out, cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 0 } });
const asst = (uuid: string, parent: string | null, id: string, requestId: string | undefined, block: object, out: number, extra: object = {}) => ({
  type: 'assistant',
  ...base(uuid, parent),
  ...(requestId ? { requestId } : {}),
  ...extra,
  message: { id, model: 'claude-sonnet-4-5', role: 'assistant', content: [block], usage: usage(out) },
});
const text = (s: string) => ({ type: 'text', text: s });
const jsonl = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

describe('Claude Code requests without api-request lines (older versions)', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cc-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('counts one request per response (lines of one response share message.id + requestId), with the final output count', async () => {
    const f = join(dir, `${SID}.jsonl`);
    writeFileSync(
      f,
      jsonl([
        user('u1', null, 'Read a.txt'),
        asst('a1', 'u1', 'msg_1', 'req_1', text('Reading.'), 2),
        asst('a2', 'a1', 'msg_1', 'req_1', { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/work/demo/a.txt' } }, 57),
        user('u2', 'a2', [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello' }]),
        // A gateway drops requestId: its lines are keyed by message.id alone.
        asst('a3', 'u2', 'msg_bdrk_2', undefined, text('It says hello.'), 1),
        asst('a4', 'a3', 'msg_bdrk_2', undefined, text(' Done.'), 9),
      ]),
    );
    const [s] = await readClaudeSession(f);
    assert.deepEqual(s.requests.map((r) => [r.responseId, r.source.line, r.usage]), [
      ['msg_1', 2, { uncached: 3, cacheRead: 1000, cacheWrite: 200, output: 57 }],
      ['msg_bdrk_2', 5, { uncached: 3, cacheRead: 1000, cacheWrite: 200, output: 9 }],
    ]);
    // The history is replayed from the tree: user, assistant (both lines of msg_1), tool result.
    assert.deepEqual(s.requests.map((r) => messageCount(r.tail)), [1, 3]);
    assert.ok(s.requests.every((r) => r.notes?.some((n) => n.startsWith('head opaque'))));
  });

  it('counts both branches of a rewind, and an API error entry as a failed request', async () => {
    const f = join(dir, 'rewind', `${SID}.jsonl`);
    mkdirSync(join(dir, 'rewind'));
    writeFileSync(
      f,
      jsonl([
        user('u1', null, 'First'),
        asst('a1', 'u1', 'msg_1', 'req_1', text('One.'), 3),
        user('u2', 'a1', 'Second'),
        asst('a2', 'u2', 'msg_2', 'req_2', text('Two.'), 3),
        // Rewind to a1: a new user message on the same parent.
        user('u3', 'a1', 'Second, again'),
        { ...asst('a3', 'u3', 'msg_err', undefined, text('API Error: 500 overloaded'), 0, { isApiErrorMessage: true }), message: { id: 'msg_err', model: '<synthetic>', role: 'assistant', content: [text('API Error: 500 overloaded')], usage: usage(0) } },
      ]),
    );
    const [s] = await readClaudeSession(f);
    assert.deepEqual(s.requests.map((r) => r.responseId), ['msg_1', 'msg_2', 'msg_err']);
    assert.deepEqual(s.requests.map((r) => messageCount(r.tail)), [1, 3, 3]);
    assert.equal(s.requests[2].error, 'API Error: 500 overloaded');
    assert.equal(s.requests[2].usage, null);
  });

  it("counts a sub-agent's response once: from its own file, or from the main file's progress copy when that file is absent", async () => {
    const d = join(dir, 'agents');
    mkdirSync(join(d, SID, 'subagents'), { recursive: true });
    const sub = asst('s1', 'su1', 'msg_sub', 'req_sub', text('Sub-agent answer.'), 4, { isSidechain: true, agentId: 'a1b2' });
    const main = jsonl([
      user('u1', null, 'Delegate'),
      asst('a1', 'u1', 'msg_1', 'req_1', { type: 'tool_use', id: 'toolu_1', name: 'Task', input: { prompt: 'x' } }, 5),
      { type: 'progress', ...base('p1', 'a1'), data: { type: 'agent_progress', agentId: 'a1b2', message: sub } },
      user('u2', 'a1', [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'done' }]),
      asst('a2', 'u2', 'msg_2', 'req_2', text('Done.'), 2),
    ]);
    writeFileSync(join(d, `${SID}.jsonl`), main);
    writeFileSync(join(d, SID, 'subagents', 'agent-a1b2.jsonl'), jsonl([{ ...user('su1', null, 'x'), isSidechain: true, agentId: 'a1b2' }, sub]));
    const withFile = await readClaudeSession(join(d, `${SID}.jsonl`));
    assert.deepEqual(withFile.map((s) => [s.id, s.parentId ?? null, s.requests.map((r) => r.responseId)]), [
      [SID, null, ['msg_1', 'msg_2']],
      ['a1b2', SID, ['msg_sub']],
    ]);
    rmSync(join(d, SID), { recursive: true });
    const without = await readClaudeSession(join(d, `${SID}.jsonl`));
    assert.deepEqual(without.map((s) => s.requests.map((r) => r.responseId)), [['msg_1', 'msg_sub', 'msg_2']]);
    assert.ok(without[0].requests[1].notes?.some((n) => n.includes('agent_progress')));
  });

  it('keeps inline sidechain requests (1.0.x) in their own cache lineage', async () => {
    const f = join(dir, 'side', `${SID}.jsonl`);
    mkdirSync(join(dir, 'side'));
    writeFileSync(f, jsonl([user('u1', null, 'Hi'), asst('a1', 'u1', 'msg_1', 'req_1', text('Hi.'), 2), { ...user('s0', null, 'Sub task'), isSidechain: true }, asst('s1', 's0', 'msg_s', 'req_s', text('Sub.'), 2, { isSidechain: true })]));
    const [s] = await readClaudeSession(f);
    assert.deepEqual(s.requests.map((r) => r.cacheKey ?? null), [null, 'sidechain']);
  });

  it('reports a malformed line with its line number and reads the rest', async () => {
    const f = join(dir, 'bad', `${SID}.jsonl`);
    mkdirSync(join(dir, 'bad'));
    writeFileSync(f, `${JSON.stringify(user('u1', null, 'Hi'))}\n{not json\n${JSON.stringify({ type: 'assistant', uuid: 'x' })}\n${JSON.stringify(asst('a1', 'u1', 'msg_1', 'req_1', text('Hi.'), 2))}\n`);
    const [s] = await readClaudeSession(f);
    assert.deepEqual(s.diagnostics.map((d) => [d.line, d.severity]), [
      [2, 'error'],
      [3, 'warning'],
    ]);
    assert.deepEqual(s.requests.map((r) => r.responseId), ['msg_1']);
  });
});
