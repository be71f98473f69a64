/**
 * A capture folder's bodies each repeat the conversation so far; their chains share the previous
 * body's nodes (core/wire.ts WireChains) instead of one chain of their own each (N chains of up to
 * N nodes, every one kept and hashed). The requests, their analysis and the report must be the
 * same as with each body's own chain (readCaptureSessions ownChains), including the break's body
 * offset where a shared block stands elsewhere in the later body (Chat Completions sends `tools`
 * after `messages`).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { analyzeSession } from '../../../src/core/analyze.js';
import type { LlmRequest, Session } from '../../../src/core/model.js';
import { readCaptureSessions } from '../../../src/hosts/capture/index.js';
import { sessionReport } from '../../../src/report/json.js';

/** A request with its chain as plain blocks (hash, place, bytes, marks, own body offset), head first. */
function requestView(r: LlmRequest): unknown {
  const blocks: unknown[] = [];
  for (let n = r.tail; n; n = n.prev) {
    const { bytes, bodyOffset, ...rest } = n.block;
    blocks.unshift({ hash: n.hashHex, size: n.size, ...rest, bytes: Buffer.from(bytes).toString('latin1'), bodyOffset: r.bodyOffsets?.get(n.depth) ?? bodyOffset });
  }
  const { tail: _tail, bodyOffsets: _offsets, ...rest } = r;
  return { ...rest, blocks };
}

const view = (ss: Session[]) => ss.map((s) => ({ ...s, requests: s.requests.map(requestView), report: JSON.stringify(sessionReport(analyzeSession(s))) }));

/** Asserts both readings of a folder equal; returns how many requests were compared. */
async function assertAsOwnChains(dir: string): Promise<number> {
  const shared = await readCaptureSessions(dir);
  const own = await readCaptureSessions(dir, true);
  assert.deepEqual(view(shared), view(own));
  return shared.reduce((n, s) => n + s.requests.length, 0);
}

const stepArb = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('turn' as const), long: fc.boolean(), tool: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('system' as const), text: fc.constantFrom('Be brief.', 'Date: 2026-12-02', 'Ünïcode “quotes”') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tool-added' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tools-first' as const), first: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('repeat' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rewind' as const), back: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('model' as const), model: fc.constantFrom('m-a', 'm-b') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('session' as const), session: fc.constantFrom('s1', 's2', null) }) },
);
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/**
 * Writes a folder of bodies from generated steps: Anthropic Messages (cache_control on the system
 * block and the last message: a moving marker) or Chat Completions (tools before or after
 * messages), a body per turn holding the conversation so far; edits of the system prompt, a tool
 * added, a body sent twice, a rewind, model switches, bodies of two sessions interleaved.
 */
function writeFolder(dir: string, anthropic: boolean, steps: Step[]): void {
  let system = 'You are a helper.';
  const tools = [{ name: 'read', description: 'Read a file', parameters: { type: 'object' } }];
  const turns: Array<{ user: string; reply: string }> = [];
  let toolsFirst = false;
  let model = 'm-a';
  let session: string | null = 's1';
  let n = 0;
  const send = () => {
    n++;
    let body: Record<string, unknown>;
    if (anthropic) {
      const messages = turns.flatMap((t, i) => [
        { role: 'user', content: [{ type: 'text', text: t.user, ...(i === turns.length - 1 ? { cache_control: { type: 'ephemeral' } } : {}) }] },
        ...(i < turns.length - 1 ? [{ role: 'assistant', content: [{ type: 'text', text: t.reply }] }] : []),
      ]);
      const t = tools.map((x) => ({ name: x.name, description: x.description, input_schema: x.parameters }));
      const sys = [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }];
      body = toolsFirst ? { model, tools: t, system: sys, messages, max_tokens: 100 } : { model, max_tokens: 100, messages, system: sys, tools: t };
    } else {
      const messages = [{ role: 'system', content: system }, ...turns.flatMap((t, i) => [{ role: 'user', content: t.user }, ...(i < turns.length - 1 ? [{ role: 'assistant', content: t.reply }] : [])])];
      const t = tools.map((x) => ({ type: 'function', function: x }));
      body = toolsFirst ? { model, tools: t, messages, stream: true } : { model, messages, tools: t, stream: true };
    }
    const name = `${String(n).padStart(4, '0')}-${anthropic ? 'anthropic-messages' : 'openai-completions'}`;
    writeFileSync(join(dir, `${name}.body.json`), JSON.stringify(body));
    const at = (ms: number) => new Date(Date.UTC(2026, 11, 2, 9) + n * 20_000 + ms).toISOString();
    const usage = anthropic ? { input_tokens: 10, cache_read_input_tokens: 100 * n, cache_creation_input_tokens: 5, output_tokens: 3 } : { prompt_tokens: 100 * n, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 90 * n } };
    writeFileSync(join(dir, `${name}.meta.json`), JSON.stringify({ receivedAt: at(0), responseStartedAt: at(30), responseEndedAt: at(400), status: 200, usage, ...(session ? { sessionId: session } : {}) }));
  };
  for (const s of steps) {
    if (s.kind === 'turn') {
      turns.push({ user: `Turn ${n}: ${s.long ? 'x'.repeat(600) : 'short'}${s.tool ? ' READ_FILE a.txt' : ''}`, reply: `Reply ${n}.` });
      send();
    } else if (s.kind === 'system') system = s.text;
    else if (s.kind === 'tool-added') tools.push({ name: `tool${tools.length}`, description: 'Another tool', parameters: { type: 'object' } });
    else if (s.kind === 'tools-first') toolsFirst = s.first;
    else if (s.kind === 'repeat') {
      if (turns.length) send();
    } else if (s.kind === 'rewind') turns.splice(Math.max(0, turns.length - s.back));
    else if (s.kind === 'model') model = s.model;
    else session = s.session;
  }
  if (!n) send();
}

/**
 * s2 sends a turn; s1 adds a tool and sends two turns (the first long); s2, with the tool, rewinds
 * one turn and sends one: its tools are s1's blocks (body 0003, same bytes and paths), which stand
 * after s1's longer messages in that body, and it breaks at tools[1] against its own first body.
 */
const OTHER_SESSION_TOOL: Step[] = [
  { kind: 'session', session: 's2' },
  { kind: 'turn', long: false, tool: false },
  { kind: 'session', session: 's1' },
  { kind: 'tool-added' },
  { kind: 'turn', long: true, tool: false },
  { kind: 'turn', long: false, tool: false },
  { kind: 'session', session: 's2' },
  { kind: 'rewind', back: 1 },
  { kind: 'turn', long: false, tool: true },
];

describe('capture folders: chains shared between consecutive bodies', () => {
  it('equal each body read with its own chain (generated: Anthropic and Chat Completions bodies, edits, moving markers, tools after messages, rewinds, two sessions)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'capture-shared-'));
    try {
      let k = 0;
      let requests = 0;
      await fc.assert(
        fc.asyncProperty(fc.boolean(), fc.array(stepArb, { minLength: 1, maxLength: 30 }), async (anthropic, steps) => {
          const dir = join(root, String(k++));
          mkdirSync(dir);
          writeFolder(dir, anthropic, steps);
          requests += await assertAsOwnChains(dir);
        }),
        { numRuns: 150, examples: [[false, OTHER_SESSION_TOOL]] },
      );
      assert.ok(requests > 300, `${requests} requests compared`); // 480–570 in 5 runs
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("a break at a block shared with the other session's body is located at this body's own offset (tools after messages)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capture-shared-'));
    try {
      writeFolder(dir, false, OTHER_SESSION_TOOL);
      await assertAsOwnChains(dir);
      const s2 = (await readCaptureSessions(dir)).find((s) => s.requests.some((r) => r.source.file.endsWith('0004-openai-completions.body.json')))!;
      const req = s2.requests.find((r) => r.source.file.endsWith('0004-openai-completions.body.json'))!;
      assert.deepEqual([...(req.bodyOffsets ?? [])], [
        [1, 906],
        [2, 1012],
      ]);
      const judged = analyzeSession(s2).requests.find((a) => a.request === req)!;
      // A break, not below-minimum: the generated usage reports cache reads (90 of #1's 100 tokens, 360 of this one's 400), so both were cached, whatever our 1,024-token minimum says.
      assert.deepEqual([judged.verdict, judged.break?.path, judged.break?.byteOffset], ['break', 'tools[1]', 1012]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('equal each body read with its own chain on every recorded folder of bodies', async () => {
    const folders: string[] = [];
    const walk = (d: string) => {
      const names = readdirSync(d);
      if (names.some((n) => n.endsWith('.body.json'))) folders.push(d);
      for (const n of names) if (statSync(join(d, n)).isDirectory()) walk(join(d, n));
    };
    walk('test/fixtures');
    const counts: Record<string, number> = {};
    for (const d of folders.sort()) counts[d.replace('test/fixtures/', '')] = await assertAsOwnChains(d);
    assert.deepEqual(counts, {
      'claude-code-autocompact/requests': 5,
      'claude-code/requests': 14,
      'codex-agents/requests': 7,
      'codex/requests': 10,
      'opencode-capture/captures/session-ses_dcdc9b833ffegPxlqBVR4iOzp5': 6,
      'opencode-capture/captures/session-ses_dcdca3fe1ffeLd5BBYSUjs05J2': 9,
      'opencode-capture/captures/session-ses_dcdcb8c7dffevesogVf8WzwkcR': 10,
      'opencode-capture/captures/session-ses_dcdcb9e30ffeJuwg2tOLd4DuR2': 1,
      'opencode-capture/captures/session-ses_dcdcbe000ffeEaI1hwOyII419d': 6,
      'opencode-capture/captures/session-ses_dcdcc64ffffeUZwbgyR2pG4sbg': 7,
      'opencode/requests': 39,
      'pi-capture/long/captures/2026-12-01': 7,
      'pi-capture/long/captures/session-01a231a6-418a-7658-a017-0d8629e2dcaf': 1,
      'pi-capture/long/requests': 8,
      'pi-capture/main/captures/2026-12-01': 14,
      'pi-capture/main/captures/session-01a231a6-40e0-7243-ac4f-14c692e9ac4e': 2,
      'pi-capture/main/requests': 16,
      'pi/long/requests': 8,
      'pi/main/requests': 16,
    });
  });
});
