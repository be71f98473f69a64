/**
 * The OpenCode reader on the recorded sessions (test/fixtures/opencode: real opencode-ai 1.18.33,
 * scripted provider, usage synthetic): requests, kinds, usage, message counts, child sessions,
 * events — exact values from the recordings. Reconstructed mode (no captured bodies).
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Session } from '../../../src/core/model.js';
import { readOpenCode } from '../../../src/hosts/opencode/index.js';
import { blocksOf } from '../../../src/core/chain.js';
import { DB, FIXTURES, cleanup, messageBlocksOf, messageCount, openFixture, query, sessionIds, tempDir, writeLegacyStorage } from './helpers.js';

const ids = sessionIds();
const S = ids.sessions;
const CHILD = Object.keys(ids.children)[0];

describe('OpenCode reader: recorded sessions (reconstructed)', () => {
  let sessions: Session[];
  const byId = (id: string) => sessions.find((s) => s.id === id)!;
  before(async () => {
    sessions = await readOpenCode(FIXTURES);
  });

  it('reads the six sessions of the recording in creation order, the child with its parent id', () => {
    assert.deepEqual(
      sessions.map((s) => s.id),
      [S.basic, S.anthropic, CHILD, S.compaction, S.phuxV1, S.phuxV2],
    );
    assert.equal(byId(CHILD).parentId, S.anthropic);
    assert.equal(byId(CHILD).title, 'Scripted subtask (@general subagent)');
    assert.equal(byId(S.basic).parentId, undefined);
    assert.equal(byId(S.basic).cwd, '/tmp/prefix-lens-opencode-lab/proj');
    assert.equal(byId(S.phuxV1).cwd, '/tmp/prefix-lens-opencode-lab/proj-phux-v1');
    for (const s of sessions) {
      assert.equal(s.host, 'opencode');
      assert.deepEqual(s.diagnostics, [], s.id);
      assert.deepEqual(s.ignored, {}, s.id);
    }
  });

  it('has one request per assistant step: kinds per session (a = agent, s = summary)', () => {
    const kinds = (id: string) => byId(id).requests.map((r) => (r.kind === 'agent' ? 'a' : r.kind === 'summary' ? 's' : 't')).join('');
    assert.equal(kinds(S.basic), 'aaaaaa');
    assert.equal(kinds(S.anthropic), 'aaaaa');
    assert.equal(kinds(CHILD), 'a');
    // auto compaction after request 4, manual compaction (opencode serve) after request 7
    assert.equal(kinds(S.compaction), 'aaaasaasa');
    assert.equal(kinds(S.phuxV1), 'aaaaasaa');
    assert.equal(kinds(S.phuxV2), 'aaaaa');
  });

  it('gives provider, model, api, timestamps and a database row for each request', async () => {
    const basic = byId(S.basic).requests;
    assert.deepEqual(
      basic.map((r) => r.model),
      ['gpt-5-mini', 'gpt-5-mini', 'gpt-5-mini', 'gpt-5-mini', 'gpt-4.1', 'gpt-5-mini'],
    );
    assert.ok(basic.every((r) => r.provider === 'fake' && r.api === 'openai-completions' && r.evidence === 'reconstructed'));
    assert.ok(byId(S.anthropic).requests.every((r) => r.provider === 'fakeant' && r.model === 'claude-sonnet-4-5' && r.api === 'anthropic-messages'));
    // basic: one request per assistant message, at its row and creation time.
    const db = await openFixture();
    const assistants = query(db, `SELECT id, data FROM message WHERE session_id = '${S.basic}' ORDER BY time_created, id`)
      .map((m) => ({ id: String(m.id), info: JSON.parse(String(m.data)) as { role: string; time: { created: number } } }))
      .filter((m) => m.info.role === 'assistant');
    db.close();
    assert.deepEqual(
      basic.map((r) => [r.source.row, r.timeMs]),
      assistants.map((m) => [`message:${m.id}`, m.info.time.created]),
    );
    for (const s of sessions) {
      for (const r of s.requests) {
        assert.equal(r.source.file, DB);
        assert.equal(r.source.line, 0);
        assert.match(r.source.row!, /^message:msg_/);
        assert.notEqual(r.timeMs, null);
        assert.match(r.notes![0], /^head opaque/);
      }
      const times = s.requests.map((r) => r.timeMs!);
      assert.deepEqual(times, [...times].sort((a, b) => a - b));
    }
  });

  it('normalizes usage: per-request sums equal the session token totals of the database', async () => {
    const db = await openFixture();
    for (const s of sessions) {
      const [row] = query(db, `SELECT tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write FROM session WHERE id = '${s.id}'`);
      const sum = { uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
      for (const r of s.requests) for (const k of Object.keys(sum) as Array<keyof typeof sum>) sum[k] += r.usage![k]!;
      assert.deepEqual(sum, {
        uncached: row.tokens_input,
        cacheRead: row.tokens_cache_read,
        cacheWrite: row.tokens_cache_write,
        output: Number(row.tokens_output) + Number(row.tokens_reasoning),
      }, s.id);
    }
    db.close();
    // openai-compatible: input excludes cached tokens (prompt 7533, cached 7424 → 109 uncached)
    assert.deepEqual(byId(S.basic).requests[1].usage, { uncached: 109, cacheRead: 7424, cacheWrite: 0, output: 18 });
    // Anthropic: input_tokens, cache_read_input_tokens, cache_creation_input_tokens
    assert.deepEqual(byId(S.anthropic).requests[0].usage, { uncached: 0, cacheRead: 0, cacheWrite: 7605, output: 13 });
  });

  it('rebuilds the message list of every request with the shape OpenCode sends', () => {
    const counts = (id: string) => byId(id).requests.map((r) => messageCount(r.tail));
    assert.deepEqual(counts(S.basic), [1, 3, 5, 7, 9, 11]);
    assert.deepEqual(counts(S.anthropic), [1, 3, 5, 7, 9]);
    // summaries: one prompt message; after each compaction the history restarts at "What did we do so far?"
    assert.deepEqual(counts(S.compaction), [1, 3, 5, 7, 1, 3, 5, 1, 3]);
    assert.deepEqual(counts(S.phuxV1), [1, 3, 5, 7, 9, 1, 3, 5]);
    assert.deepEqual(counts(S.phuxV2), [1, 3, 5, 7, 9]);
  });

  it('encodes a tool call as an assistant message with tool_calls plus a tool message (Chat Completions)', () => {
    const r = byId(S.basic).requests[2];
    const msgs = messageBlocksOf(r.tail).map((b) => JSON.parse(new TextDecoder().decode(b.bytes)));
    assert.equal(msgs[3].role, 'assistant');
    assert.equal(msgs[3].content, '');
    assert.equal(msgs[3].tool_calls[0].function.name, 'read');
    assert.equal(msgs[4].role, 'tool');
    assert.equal(msgs[4].tool_call_id, msgs[3].tool_calls[0].id);
    assert.deepEqual(messageBlocksOf(r.tail).map((b) => b.path), ['messages[1]', 'messages[2]', 'messages[3]', 'messages[4]', 'messages[5]']);
  });

  it('encodes Anthropic content blocks: tool_use in the assistant message, tool_result in the next user message', () => {
    const blocks = messageBlocksOf(byId(S.anthropic).requests[2].tail);
    assert.deepEqual(blocks.map((b) => [b.item, b.path, b.role]), [
      [0, 'messages[0].content[0]', 'user'],
      [1, 'messages[1].content[0]', 'assistant'],
      [2, 'messages[2].content[0]', 'user'],
      [3, 'messages[3].content[0]', 'assistant'],
      [4, 'messages[4].content[0]', 'user'],
    ]);
    assert.match(new TextDecoder().decode(blocks[3].bytes), /^\{"role":"assistant","content":\[\{"type":"tool_use","id":"toolu_/);
    assert.match(new TextDecoder().decode(blocks[4].bytes), /^\{"role":"user","content":\[\{"type":"tool_result","tool_use_id":"toolu_/);
  });

  it('puts one opaque head block first, one node per session, and shares the prefix between requests', () => {
    for (const s of sessions) {
      const agents = s.requests.filter((r) => r.kind === 'agent');
      const heads = new Set(agents.map((r) => r.tail!.at(1)));
      assert.equal(heads.size, 1, s.id);
      const head = [...heads][0]!;
      assert.equal(head.block.segment, 'head');
      assert.equal(blocksOf(agents[0].tail).filter((b) => b.segment === 'head').length, 1);
    }
    // request 2 extends request 1: the first user message is the same node
    const [r1, r2] = byId(S.basic).requests;
    assert.equal(r2.tail!.at(2), r1.tail);
  });

  it('marks the compaction prompt and summary as compaction-summary and phux parts as phux-context', () => {
    const afterCompaction = byId(S.compaction).requests[5];
    assert.deepEqual(
      messageBlocksOf(afterCompaction.tail).map((b) => b.origin ?? null),
      ['compaction-summary', 'compaction-summary', null],
    );
    const v1 = byId(S.phuxV1).requests[0];
    // "Phux v1 turn one." then the synthetic prt_z… part: the context sits at the tail
    assert.deepEqual(messageBlocksOf(v1.tail).map((b) => [b.path, b.origin ?? null]), [
      ['messages[1].content[0]', null],
      ['messages[1].content[1]', 'phux-context'],
    ]);
  });

  it('reports compactions and V1 phux context parts as events, and the turn starts', () => {
    const ev = (id: string) => byId(id).events.map((e) => (e.kind === 'context' ? `${e.placement}@${e.line}:${/kind="(\w+)" seq="(\d+)"/.exec(e.text)!.slice(1).join(' ')}` : `${e.kind}@${e.line}`));
    assert.deepEqual(ev(S.compaction), ['compaction@8', 'compaction@14']);
    assert.deepEqual(ev(S.phuxV1), ['tail@1:checkpoint 1', 'tail@6:delta 2', 'tail@8:delta 3', 'compaction@10', 'tail@14:checkpoint 5']);
    // V2 puts the context into the system prompt, which OpenCode does not store
    assert.deepEqual(ev(S.phuxV2), []);
    assert.deepEqual(byId(S.compaction).turnLines, [1, 3, 6, 12, 16]);
    assert.deepEqual(byId(S.phuxV1).turnLines, [1, 3, 6, 8, 14]);
  });

  it('accepts opencode:<sessionID> (located with the environment) and a database file', async () => {
    const dir = tempDir();
    try {
      const data = `${dir}/data/opencode`;
      const { mkdirSync, copyFileSync } = await import('node:fs');
      mkdirSync(data, { recursive: true });
      copyFileSync(DB, `${data}/opencode.db`);
      const one = await readOpenCode(`opencode:${S.anthropic}`, { env: { HOME: dir, XDG_DATA_HOME: `${dir}/data` } });
      assert.deepEqual(one.map((s) => [s.id, s.requests.length]), [[S.anthropic, 5]]);
      const missing = await readOpenCode('opencode:ses_missing', { env: { HOME: dir, XDG_DATA_HOME: `${dir}/data` } });
      assert.equal(missing[0].requests.length, 0);
      assert.match(missing[0].diagnostics.at(-1)!.message, /session ses_missing not found/);
      const byFile = await readOpenCode(DB, { session: S.basic });
      assert.deepEqual(byFile.map((s) => s.id), [S.basic]);
    } finally {
      cleanup(dir);
    }
  });

  it('never writes the database (bytes and mtime unchanged, no -wal/-shm created)', async () => {
    const before = { hash: createHash('sha256').update(readFileSync(DB)).digest('hex'), mtime: statSync(DB).mtimeMs };
    await readOpenCode(FIXTURES, { requestsDir: `${FIXTURES}/requests` });
    assert.equal(createHash('sha256').update(readFileSync(DB)).digest('hex'), before.hash);
    assert.equal(statSync(DB).mtimeMs, before.mtime);
    assert.throws(() => statSync(`${DB}-wal`));
    assert.throws(() => statSync(`${DB}-shm`));
  });
});

describe('OpenCode reader: legacy JSON storage (< 1.2)', () => {
  let dir: string;
  let fromDb: Session[];
  let fromJson: Session[];
  before(async () => {
    dir = tempDir();
    await writeLegacyStorage(dir);
    fromDb = await readOpenCode(DB);
    fromJson = await readOpenCode(dir);
  });
  after(() => cleanup(dir));

  it('reads storage/{session,message,part} into the same sessions, requests, usage and message bytes', () => {
    assert.deepEqual(fromJson.map((s) => s.id), fromDb.map((s) => s.id));
    for (const [i, s] of fromJson.entries()) {
      const d = fromDb[i];
      assert.deepEqual(s.diagnostics, []);
      assert.equal(s.parentId, d.parentId);
      assert.deepEqual(s.requests.map((r) => [r.kind, r.model, r.usage]), d.requests.map((r) => [r.kind, r.model, r.usage]));
      for (const [k, r] of s.requests.entries()) {
        const a = messageBlocksOf(r.tail).map((b) => Buffer.from(b.bytes).toString('utf8'));
        const b = messageBlocksOf(d.requests[k].tail).map((x) => Buffer.from(x.bytes).toString('utf8'));
        assert.deepEqual(a, b, `${s.id} #${r.index}`);
      }
      assert.deepEqual(s.events, d.events);
    }
  });

  it('points requests at the message JSON file', () => {
    const r = fromJson[0].requests[0];
    assert.match(r.source.file, /storage\/message\/ses_\w+\/msg_\w+\.json$/);
    assert.equal(r.source.line, 1);
  });
});
