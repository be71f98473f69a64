/**
 * A folder of captured bodies (a recorder's `requests/`, a capture day folder) can hold several
 * conversations: each is judged as a session of its own, never against another's cache entries.
 * Judged as one, a sub-agent's first request was a false `tools-changed` break of its parent
 * (Claude Code #6 at tools[3], ~11,210 tokens; Codex #4 at tools[4], ~7,108), and each new
 * OpenCode session's first request a break of the previous session. Recorded folders only.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import type { Session } from '../../../src/core/model.js';
import { readCaptureSession, readCaptureSessions } from '../../../src/hosts/capture/index.js';

/**
 * A session with each request's chain as its blocks in order and its prefix hash: deep-comparing
 * the chain nodes themselves walks every ancestor again through each node's jump pointer (seconds
 * for a 30-request session).
 */
const plain = (s: Session) => ({
  ...s,
  requests: s.requests.map((r) => {
    const blocks = [];
    for (let n = r.tail; n; n = n.prev) blocks.unshift(n.block);
    return { ...r, tail: r.tail?.hashHex ?? null, blocks };
  }),
});

const judged = async (dir: string) =>
  (await readCaptureSessions(dir)).map((s) => {
    const a = analyzeSession(s);
    return [s.id, s.parentId ?? null, a.requests.map((r) => `${r.request.kind[0]}:${r.verdict}${r.break ? `@${r.break.segment}[${r.break.blockIndex}]` : ''}`).join(' ')];
  });

describe('capture folders: one session per conversation the bodies name', () => {
  it('Claude Code recording: the session (13 requests, one break at system[0]) and its sub-agent (cold)', async () => {
    assert.deepEqual(await judged('test/fixtures/claude-code/requests'), [
      ['requests', null, 'a:cold a:hit a:hit a:hit a:hit a:hit a:unknown a:hit a:hit a:break@system[0] a:model-switch a:hit a:hit'],
      ['aa4455826cc83258f', 'requests', 'a:cold'],
    ]);
  });

  it('Codex sub-agent and fork: the parent (4), the sub-agent thread (cold), the fork (its own session id)', async () => {
    assert.deepEqual(await judged('test/fixtures/codex-agents/requests'), [
      ['requests', null, 'a:cold a:hit a:hit a:hit'],
      ['01a231c4-8690-71b3-9bda-f86ba8c8c9e6', 'requests', 'a:cold'],
      ['01a231c4-8c57-7e42-bdd1-a6aa99bf54c4', null, 'a:cold a:break@params[0]'],
    ]);
  });

  it('Codex compaction call (no tools, its prompt after the history): a cold summary, not a break at tools[0]', async () => {
    assert.deepEqual(await judged('test/fixtures/codex/requests'), [
      ['requests', null, 'a:cold a:hit a:hit a:unknown a:hit a:hit a:model-switch s:cold a:break@system[1] a:hit'],
    ]);
  });

  it('OpenCode recording: six sessions by x-session-id, each starting cold (the title request, then the agent)', async () => {
    const j = await judged('test/fixtures/opencode/requests');
    assert.deepEqual(j.map((x) => x[0]), ['requests', 'ses_dcf1247e0ffeCgywanUhom13B7', 'ses_dcf121370ffeVlzS73yoNupUUO', 'ses_dcf12063affe59b8qPYo2NJTOV', 'ses_dcf11ac77ffefsqoAY3L11jvVW', 'ses_dcf113f82ffe0AQvhG5Km2IW6u']);
    assert.deepEqual(j.map((x) => (x[2] as string).split(' ').slice(0, 2).join(' ')), ['t:below-minimum a:cold', 't:below-minimum a:cold', 'a:cold', 't:below-minimum a:cold', 't:below-minimum a:cold', 't:below-minimum a:cold']);
    assert.equal(j.flatMap((x) => (x[2] as string).split(' ')).filter((v) => v.includes('@tools')).length, 0);
    assert.equal(j[5][2], 't:below-minimum a:cold a:hit a:hit a:break@system[1] a:hit');
  });

  it('one conversation: the one session readCaptureSession gives (Pi recordings), its bodies without session_id noted', async () => {
    for (const [dir, id, named] of [
      ['test/fixtures/pi/main/requests', '01a230ec-9a4e-7417-8af1-68d34234bdc8', [14, 15]],
      ['test/fixtures/pi/long/requests', '01a230ec-991a-7497-9a50-b9f4f6517541', [8]],
    ] as const) {
      const ss = await readCaptureSessions(dir);
      assert.equal(ss.length, 1, dir);
      // Pi sends `session_id` on OpenAI Responses only: the other bodies name no session.
      const note = `no session header (capture proxy sessionId, x-claude-code-session-id, x-session-id, session-id): read with the folder's first conversation (${id}), as every body that names none`;
      assert.deepEqual(
        ss[0].requests.map((r) => [r.index, r.notes]),
        ss[0].requests.map((r) => [r.index, (named as readonly number[]).includes(r.index) ? [] : [note]]),
      );
      for (const r of ss[0].requests) r.notes = [];
      assert.deepEqual(plain(ss[0]), plain(await readCaptureSession(dir)));
    }
  });
});
