/**
 * The recorded Pi scenarios (test/fixtures/pi, real pi 0.73.1 against the scripted provider; usage
 * numbers are synthetic). Line numbers are session-file lines (1 = header); request numbers #N are
 * the captured bodies' send order. See test/fixtures/pi/README.md for the step tables.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { blocksOf } from '../../../src/core/chain.js';
import type { LlmRequest, Session, Usage } from '../../../src/core/model.js';
import { locatePiSessions, readPiSession } from '../../../src/hosts/pi/index.js';
import { COMPACTION_SUMMARY_PREFIX, HEAD_NOTE } from '../../../src/hosts/pi/normalize.js';
import { cleanup, messageBlocksOf, messageCount, messageText, tempDir } from './helpers.js';

const FIXTURES = resolve('test/fixtures/pi');

async function scenario(name: string): Promise<{ file: string; requestsDir: string; agentDir: string }> {
  const agentDir = join(FIXTURES, name, 'agent');
  const found = await locatePiSessions({ PI_CODING_AGENT_DIR: agentDir }, '/nonexistent-home');
  assert.equal(found.length, 1, `one session under ${agentDir}`);
  return { file: found[0].file, requestsDir: join(FIXTURES, name, 'requests'), agentDir };
}

function usageSum(s: Session): Usage {
  const sum = { uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  for (const r of s.requests) {
    if (!r.usage) continue;
    sum.uncached += r.usage.uncached!;
    sum.cacheRead += r.usage.cacheRead!;
    sum.cacheWrite += r.usage.cacheWrite!;
    sum.output += r.usage.output!;
  }
  return sum;
}

const atLine = (s: Session, line: number): LlmRequest => {
  const r = s.requests.find((x) => x.source.line === line && x.source.file === s.path);
  assert.ok(r, `request for line ${line}`);
  return r;
};

const dec = new TextDecoder();
/** For every reconstructed request: same message count as its body, and message blocks byte-identical with the same breakpoints. */
function assertShapesAgree(recon: Session, wire: Session): void {
  for (const r of recon.requests) {
    const w = atLine(wire, r.source.line);
    assert.equal(w.evidence, 'wire', `line ${r.source.line} matched a body`);
    assert.equal(messageCount(r.tail), messageCount(w.tail), `messages of line ${r.source.line}`);
    const a = messageBlocksOf(r.tail);
    const b = messageBlocksOf(w.tail);
    assert.deepEqual(
      a.map((x) => [x.path, dec.decode(x.bytes), x.breakpoint !== undefined]),
      b.map((x) => [x.path, dec.decode(x.bytes), x.breakpoint !== undefined]),
      `message blocks of line ${r.source.line}`,
    );
  }
}

describe('pi fixtures: main (11 steps, 16 requests, 45 lines)', () => {
  let f: Awaited<ReturnType<typeof scenario>>;
  let recon: Session;
  let wire: Session;
  before(async () => {
    f = await scenario('main');
    recon = await readPiSession(f.file);
    wire = await readPiSession(f.file, { requestsDir: f.requestsDir });
  });

  it('is found under the fixture agent dir; title, cwd, no diagnostics, nothing ignored', async () => {
    const [found] = await locatePiSessions({ PI_CODING_AGENT_DIR: f.agentDir }, '/nonexistent-home');
    assert.equal(found.cwd, '/home/user/pi-lab/main/project');
    assert.equal(recon.host, 'pi');
    assert.equal(recon.title, 'pi lab session');
    assert.equal(recon.cwd, '/home/user/pi-lab/main/project');
    assert.deepEqual(recon.diagnostics, []);
    assert.deepEqual(wire.diagnostics, []);
    assert.deepEqual(recon.ignored, {});
  });

  it('reconstructs one agent request per assistant entry: 13, at their lines, with model, api and response id', () => {
    assert.deepEqual(
      recon.requests.map((r) => [r.index, r.source.line, r.api, `${r.provider}/${r.model}`, r.responseId, r.kind, r.evidence]),
      [
        [1, 5, 'openai-completions', 'fake-openai/gpt-5', 'chatcmpl-fake-1', 'agent', 'reconstructed'],
        [2, 7, 'openai-completions', 'fake-openai/gpt-5', 'chatcmpl-fake-2', 'agent', 'reconstructed'],
        [3, 9, 'openai-completions', 'fake-openai/gpt-5', 'chatcmpl-fake-3', 'agent', 'reconstructed'],
        [4, 12, 'openai-completions', 'fake-openai/gpt-5', 'chatcmpl-fake-4', 'agent', 'reconstructed'],
        [5, 20, 'anthropic-messages', 'fake-anthropic/claude-sonnet-4-5', 'msg_fake_5', 'agent', 'reconstructed'],
        [6, 22, 'anthropic-messages', 'fake-anthropic/claude-sonnet-4-5', 'msg_fake_6', 'agent', 'reconstructed'],
        [7, 24, 'anthropic-messages', 'fake-anthropic/claude-sonnet-4-5', 'msg_fake_7', 'agent', 'reconstructed'],
        [8, 28, 'anthropic-messages', 'fake-anthropic/claude-sonnet-4-5', 'msg_fake_8', 'agent', 'reconstructed'],
        [9, 33, 'anthropic-messages', 'fake-anthropic/claude-sonnet-4-5', 'msg_fake_11', 'agent', 'reconstructed'],
        [10, 38, 'anthropic-messages', 'fake-anthropic/claude-sonnet-4-5', 'msg_fake_13', 'agent', 'reconstructed'],
        [11, 41, 'openai-responses', 'fake-responses/gpt-5-codex', 'resp_fake_14', 'agent', 'reconstructed'],
        [12, 43, 'openai-responses', 'fake-responses/gpt-5-codex', 'resp_fake_15', 'agent', 'reconstructed'],
        // step 11: --model with --continue wrote no model_change; the assistant entry names the model
        [13, 45, 'openai-completions', 'fake-openai/gpt-5', 'chatcmpl-fake-16', 'agent', 'reconstructed'],
      ],
    );
    for (const r of recon.requests) {
      assert.deepEqual(r.notes?.[0], HEAD_NOTE);
      assert.equal(typeof r.timeMs, 'number');
    }
  });

  it('thinking level is the one Pi sent: after the in-process /tree navigation (line 38) the level of the branch it left (high), not the path\'s (off)', () => {
    assert.deepEqual(
      recon.requests.map((r) => r.params.thinking),
      ['off', 'off', 'off', 'off', 'medium', 'medium', 'medium', 'high', 'high', 'high', 'off', 'off', 'off'],
    );
    // The wire is the judge: every reconstructed Anthropic request's level is the body's budget
    // (pi-ai: medium 8192, high 16384 tokens).
    const budget: Record<string, string> = { medium: '8192', high: '16384' };
    const anthropic = recon.requests.filter((r) => r.api === 'anthropic-messages');
    assert.equal(anthropic.length, 6);
    for (const r of anthropic) {
      const w = JSON.parse(String(atLine(wire, r.source.line).params.thinking)) as { budget_tokens?: number };
      assert.equal(String(w.budget_tokens), budget[String(r.params.thinking)], `line ${r.source.line}`);
    }
  });

  it('the carried level holds for the next request of the branch, and a request sent with the path\'s model (a new process) takes the path\'s level', async () => {
    const dir = await tempDir();
    try {
      const lines = (await readFile(f.file, 'utf8')).split('\n').slice(0, 38);
      const at38 = JSON.parse(lines[37]) as { id: string; message: Record<string, unknown> };
      const turn = (id: string, parent: string, model: [string, string, string]) => [
        JSON.stringify({ type: 'message', id: `u${id}`, parentId: parent, timestamp: '2026-12-01T09:26:13.000Z', message: { role: 'user', content: [{ type: 'text', text: `next ${id}` }], timestamp: 1796117173000 } }),
        JSON.stringify({ type: 'message', id: `a${id}`, parentId: `u${id}`, timestamp: '2026-12-01T09:26:13.500Z', message: { ...at38.message, api: model[0], provider: model[1], model: model[2], responseId: `r${id}` } }),
      ];
      const claude: [string, string, string] = ['anthropic-messages', 'fake-anthropic', 'claude-sonnet-4-5'];
      // Same process: the next turn on the branch (the path now names claude too).
      const same = join(dir, 'same.jsonl');
      await writeFile(same, [...lines, ...turn('1', at38.id, claude)].join('\n') + '\n');
      assert.deepEqual((await readPiSession(same)).requests.slice(9).map((r) => r.params.thinking), ['high', 'high']);
      // A new process restored the branch point's path (gpt-5, off) where Pi had held claude: the path's level.
      const restart = join(dir, 'restart.jsonl');
      const branchPoint = JSON.parse(lines[33]) as { id: string };
      const openai: [string, string, string] = ['openai-completions', 'fake-openai', 'gpt-5'];
      const rows = [...lines.slice(0, 33), lines[33], ...turn('2', branchPoint.id, openai)];
      await writeFile(restart, rows.join('\n') + '\n');
      assert.deepEqual((await readPiSession(restart)).requests.slice(8).map((r) => r.params.thinking), ['high', 'off']);
    } finally {
      await cleanup(dir);
    }
  });

  it('usage: Pi normalized it per API; sums over the session', () => {
    assert.deepEqual(usageSum(recon), { uncached: 5971, cacheRead: 19124, cacheWrite: 4994, output: 198 });
    assert.deepEqual(atLine(recon, 20).usage, { uncached: 0, cacheRead: 0, cacheWrite: 2413, output: 17 });
    assert.deepEqual(atLine(recon, 43).usage, { uncached: 354, cacheRead: 2176, cacheWrite: 0, output: 18 });
    // the three summary requests are only in the capture (usage from its meta)
    assert.deepEqual(usageSum(wire), { uncached: 6747, cacheRead: 19124, cacheWrite: 6765, output: 349 });
  });

  it('prices from usage.cost in USD per million tokens; unobserved rates derived and noted', () => {
    assert.deepEqual(atLine(recon, 5).prices, { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 });
    assert.deepEqual(atLine(recon, 20).prices, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    assert.match(atLine(recon, 20).notes![1], /^prices: input not observed/);
  });

  it('messages per request; the request after the compaction (line 33) starts with the summary as messages[0]', () => {
    assert.deepEqual(
      recon.requests.map((r) => messageCount(r.tail)),
      [1, 3, 5, 8, 11, 13, 15, 18, 18, 6, 8, 11, 12],
    );
    const after = atLine(recon, 33).tail;
    const first = messageBlocksOf(after)[0];
    assert.equal(first.path, 'messages[0].content[0]');
    assert.equal(first.origin, 'compaction-summary');
    assert.ok(messageText(after, 0).startsWith(`{"role":"user","content":[{"type":"text","text":${JSON.stringify(COMPACTION_SUMMARY_PREFIX).slice(0, -1)}`));
    // kept from the compaction's firstKeptEntryId (line 9, an assistant reply: split turn)
    assert.equal(messageText(after, 1), '{"role":"assistant","content":[{"type":"text","text":"Tool result received (649 chars). First line: Hello from hello.txt!"}]}');
    // the branch (line 38): user 1, assistant 1, branch summary, phux checkpoint, prompt, phux delta
    assert.deepEqual(
      messageBlocksOf(atLine(recon, 38).tail).map((b) => b.origin ?? null),
      [null, null, 'branch-summary', 'phux-context', null, 'phux-context'],
    );
  });

  it('anthropic breakpoints: on the head and on the last block of the last user message only', () => {
    const t = atLine(recon, 28).tail;
    assert.deepEqual(blocksOf(t)[0].breakpoint, { ttlSeconds: 300 });
    assert.deepEqual(
      messageBlocksOf(t)
        .map((b, i) => (b.breakpoint ? i : -1))
        .filter((i) => i >= 0),
      [messageBlocksOf(t).length - 1],
    );
    assert.equal(blocksOf(atLine(recon, 5).tail)[0].breakpoint, undefined);
  });

  it('wire: the 16 captured bodies in send order; #9, #10, #12 are summaries with no session entry', () => {
    assert.deepEqual(
      wire.requests.map((r) => [r.index, r.kind, r.source.line, r.evidence]),
      [
        [1, 'agent', 5, 'wire'],
        [2, 'agent', 7, 'wire'],
        [3, 'agent', 9, 'wire'],
        [4, 'agent', 12, 'wire'],
        [5, 'agent', 20, 'wire'],
        [6, 'agent', 22, 'wire'],
        [7, 'agent', 24, 'wire'],
        [8, 'agent', 28, 'wire'],
        [9, 'summary', 1, 'wire'],
        [10, 'summary', 1, 'wire'],
        [11, 'agent', 33, 'wire'],
        [12, 'summary', 1, 'wire'],
        [13, 'agent', 38, 'wire'],
        [14, 'agent', 41, 'wire'],
        [15, 'agent', 43, 'wire'],
        [16, 'agent', 45, 'wire'],
      ],
    );
    const s9 = wire.requests[8];
    assert.equal(s9.source.file, join(f.requestsDir, '009-anthropic-messages.body.json'));
    assert.equal(s9.provider, 'fake-anthropic');
    assert.deepEqual(s9.usage, { uncached: 351, cacheRead: 0, cacheWrite: 0, output: 50 });
    assert.equal(messageCount(s9.tail), 1);
    assert.equal(atLine(wire, 41).cacheKey, recon.id);
  });

  it('every assistant entry: reconstructed messages == the wire body messages, block for block', () => {
    assertShapesAgree(recon, wire);
  });

  it('wire blocks carry the origins the bytes do not tell (compaction summary, phux context)', () => {
    assert.deepEqual(
      [...new Set(messageBlocksOf(atLine(wire, 33).tail).map((b) => `${b.item}:${b.origin ?? ''}`))].filter((x) => !x.endsWith(':')),
      ['0:compaction-summary', '3:phux-context', '6:phux-context', '13:phux-context', '15:phux-context', '17:phux-context'],
    );
  });

  it('events: phux context messages, the compaction and the branch, in file order', () => {
    assert.deepEqual(
      recon.events.map((e) => `${e.kind}@${e.line}`),
      ['context@11', 'context@19', 'context@27', 'compaction@29', 'context@30', 'context@32', 'branch@34', 'context@35', 'context@37'],
    );
    const first = recon.events[0];
    assert.ok(first.kind === 'context' && first.text.startsWith('<phux-context version="1" kind="checkpoint" seq="1">'));
  });

  it('matching does not depend on the fake response ids: without them, bodies match by order and shape', async () => {
    const dir = await tempDir('pi-noid-');
    try {
      const text = await readFile(f.file, 'utf8');
      const stripped = text.replace(/,"responseId":"[^"]*"/g, '');
      assert.notEqual(stripped, text);
      const file = join(dir, 'session.jsonl');
      await writeFile(file, stripped);
      const bodies = join(dir, 'requests');
      await mkdir(bodies);
      for (const n of await readdir(f.requestsDir)) if (n.endsWith('.body.json')) await copyFile(join(f.requestsDir, n), join(bodies, n));
      const s = await readPiSession(file, { requestsDir: bodies });
      assert.deepEqual(
        s.requests.map((r) => (r.kind === 'summary' ? 'S' : r.source.line)),
        [5, 7, 9, 12, 20, 22, 24, 28, 'S', 'S', 33, 'S', 38, 41, 43, 45],
      );
      assert.equal(s.requests[8].usage, null);
    } finally {
      await cleanup(dir);
    }
  });
});

describe('pi fixtures: long (PI_CACHE_RETENTION=long, 8 requests, 20 lines)', () => {
  let f: Awaited<ReturnType<typeof scenario>>;
  let recon: Session;
  let wire: Session;
  before(async () => {
    f = await scenario('long');
    recon = await readPiSession(f.file);
    wire = await readPiSession(f.file, { requestsDir: f.requestsDir });
  });

  it('8 requests: lines, apis, models; the HTTP 500 is an errored entry with no usage', () => {
    assert.deepEqual(
      recon.requests.map((r) => [r.source.line, r.api, r.model, r.responseId ?? null]),
      [
        [5, 'anthropic-messages', 'claude-sonnet-4-5', 'msg_fake_1'],
        [7, 'anthropic-messages', 'claude-sonnet-4-5', 'msg_fake_2'],
        [9, 'anthropic-messages', 'claude-sonnet-4-5', 'msg_fake_3'],
        [11, 'anthropic-messages', 'claude-sonnet-4-5', 'msg_fake_4'],
        [13, 'anthropic-messages', 'claude-sonnet-4-5', null],
        [14, 'anthropic-messages', 'claude-sonnet-4-5', 'msg_fake_6'],
        [17, 'openai-completions', 'gpt-5', 'chatcmpl-fake-7'],
        [20, 'openai-responses', 'gpt-5-codex', 'resp_fake_8'],
      ],
    );
    const err = atLine(recon, 13);
    assert.match(err.error!, /^500 /);
    assert.equal(err.usage, null);
    assert.equal(atLine(recon, 14).error, undefined);
    assert.deepEqual(usageSum(recon), { uncached: 3764, cacheRead: 4793, cacheWrite: 3315, output: 97 });
    assert.deepEqual(recon.diagnostics, []);
    assert.deepEqual(wire.diagnostics, []);
  });

  it('the retry (line 14, child of the error entry) has the same prefix as the failed request: the errored assistant is dropped', () => {
    assert.equal(messageCount(atLine(recon, 13).tail), 9);
    assert.equal(atLine(recon, 14).tail!.shortHash, atLine(recon, 13).tail!.shortHash);
    assert.equal(atLine(wire, 14).tail!.shortHash, atLine(wire, 13).tail!.shortHash);
  });

  it('wire: bodies #1-#8 match lines in order; long retention shows as 1h breakpoints and prompt_cache_retention 24h', () => {
    assert.deepEqual(
      wire.requests.map((r) => [r.index, r.source.line, r.kind]),
      [
        [1, 5, 'agent'],
        [2, 7, 'agent'],
        [3, 9, 'agent'],
        [4, 11, 'agent'],
        [5, 13, 'agent'],
        [6, 14, 'agent'],
        [7, 17, 'agent'],
        [8, 20, 'agent'],
      ],
    );
    const head = blocksOf(atLine(wire, 5).tail).filter((b) => b.breakpoint);
    assert.deepEqual(
      head.map((b) => [b.segment, b.breakpoint!.ttlSeconds]),
      [
        ['tools', 3600],
        ['system', 3600],
        ['messages', 3600],
      ],
    );
    // reconstructed mode cannot see the retention: 300 s
    assert.deepEqual(blocksOf(atLine(recon, 5).tail)[0].breakpoint, { ttlSeconds: 300 });
    assert.equal(atLine(wire, 17).params.prompt_cache_retention, '24h');
    assert.equal(atLine(wire, 17).cacheKey, recon.id);
  });

  it('every assistant entry: reconstructed messages == the wire body messages, block for block', () => {
    assert.deepEqual(
      recon.requests.map((r) => messageCount(r.tail)),
      [1, 3, 5, 7, 9, 9, 11, 13],
    );
    assertShapesAgree(recon, wire);
  });
});
