/**
 * The DSH session log reader on the verbatim DSH fixtures (raw `session.jsonl`, test/fixtures/botharness)
 * and on built zstd logs: requests at their assistant messages, DSH usage normalized (inputTokens is
 * uncached only), the head from `request/header`, a header `change` as a system break with its bytes.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readBotHarnessSession } from '../../../src/hosts/botharness/index.js';
import { normalizeDsh } from '../../../src/hosts/botharness/normalize.js';
import { readDshLog } from '../../../src/hosts/botharness/read.js';
import { releaseReaders } from '../../../src/hosts/registry.js';
import { sessionReport } from '../../../src/report/json.js';
import { dirname, join } from 'node:path';
import { logOfSessionDir } from '../../../src/hosts/botharness/locate.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { frame, writeLog } from './dsh-fixture.js';
import { buildScenarios, CWD_DIR, LogBuilder, PERSONA_ADA, PERSONA_ADA_SOUL2, system, TOOLS, writeRawLog, type Built } from './scenarios.js';

const FRESH = 'test/fixtures/botharness/fresh-round-trip/session.jsonl';
const MINIMAL = 'test/fixtures/botharness/minimal-preset/session.jsonl';

describe('DSH session log reader', () => {
  let built: Built;
  before(async () => (built = await buildScenarios()));
  after(() => releaseReaders());

  it('fresh-round-trip (verbatim DSH): two model calls at lines 15 and 29, usage as DSH counts it', async () => {
    const s = await readBotHarnessSession(FRESH);
    assert.equal(s.host, 'botharness');
    assert.equal(s.id, '{{sessionId}}');
    assert.equal(s.title, 'Use the bash tool to');
    assert.equal(s.cwd, '{{cwd}}/workspace');
    assert.deepEqual(s.requests.map((r) => [r.index, r.source.line, r.provider, r.model, r.api, r.timeMs]), [
      [1, 15, 'deepseek-official', 'deepseek-v4-flash', 'openai-completions', 1784973850164],
      [2, 29, 'deepseek-official', 'deepseek-v4-flash', 'openai-completions', 1784973851518],
    ]);
    assert.deepEqual(s.requests.map((r) => r.usage), [
      { uncached: 122, cacheRead: 7680, cacheWrite: 0, output: 85 },
      { uncached: 97, cacheRead: 7808, cacheWrite: 0, output: 26 },
    ]);
    assert.deepEqual(s.turnLines, [3]);
    assert.deepEqual(s.diagnostics, []);
    // The head is what DSH recorded (here the fixture's placeholders): tools, then the system prompt.
    const a = analyzeSession(s);
    const head = a.requests[0].request.tail!.at(2)!.block;
    assert.equal(head.segment, 'system');
    assert.equal(head.text, '"{{system}}"');
    assert.deepEqual(a.requests.map((r) => r.verdict), ['cold', 'hit']);
    assert.equal(a.requests[1].matched, 1);
  });

  it('minimal-preset (verbatim DSH, chunks only): one request from the finished stream at line 7', async () => {
    const s = await readBotHarnessSession(MINIMAL);
    assert.deepEqual(s.requests.map((r) => [r.source.line, r.usage, r.notes]), [
      [7, { uncached: 10, cacheRead: 0, cacheWrite: 0, output: 4 }, ['system prompt and tools as DSH recorded them (request/header); messages reconstructed from DSH events', 'head opaque: no request/header logged before this request']],
    ]);
  });

  it('a zstd log reads to the same header and events as the same log written raw', async () => {
    const b = new LogBuilder('bh-twin');
    b.user('Twice.').call('Twice.', 0, { text: system('ada', PERSONA_ADA), reason: 'initial' }).flush();
    b.user('Again.').call('Again.').flush();
    const zst = writeLog(built.main, CWD_DIR, 'bh-twin', b.bytes());
    const raw = join(dirname(zst), 'session.jsonl');
    writeRawLog(raw, b);
    const [z, r] = [await readDshLog(zst), await readDshLog(raw)];
    assert.deepEqual([z.compressed, r.compressed], [true, false]);
    assert.deepEqual(z.header, r.header);
    assert.deepEqual(z.events, r.events);
    assert.deepEqual(z.events.map((e) => [e.line, e.ev.type]).slice(0, 5), [[2, 'turn/start'], [3, 'user/message'], [4, 'step/start'], [5, 'request/header'], [6, 'assistant/message']]);
    assert.equal(z.events.length, 11);
  });

  it('log v3+: the system prompt from system/message events (a replace breaks the head); the v3 log is the one read', async () => {
    const b = new LogBuilder('bh-v3');
    const sysMsg = (text: string, surfaceOp: unknown) =>
      b.ev('system/message', { role: 'system', content: [{ type: 'text', text }], source: { kind: 'plugin', plugin: '@deepseek-ai/dsh-system-prompt' } }, { surfaceOp });
    b.ev('request/header', { header: { config: { provider: 'deepseek-official', model: 'deepseek-v4-flash' }, tools: TOOLS }, reason: 'initial' });
    sysMsg(system('ada', PERSONA_ADA), 'append');
    b.user('One.').call('1.', 0).flush();
    b.user('Two.').call('2.').flush();
    sysMsg(system('ada', PERSONA_ADA_SOUL2), { op: 'replace', start: 0, end: 1 });
    b.user('Three.').call('3.', 1024).flush();
    const v3 = writeLog(built.main, CWD_DIR, 'bh-v3', Buffer.concat([frame([{ ...b.header(), version: 3 }]), ...b.batches.map(frame)]), 'session.v3.jsonl.zstd');
    writeLog(built.main, CWD_DIR, 'bh-v3', b.bytes()); // an older generation's file beside it
    assert.equal(await logOfSessionDir(dirname(v3)), v3);
    const refs = await findSessions(dirname(v3));
    assert.deepEqual(refs.map((x) => [x.host, x.path]), [['botharness', v3]]);
    const s = await readBotHarnessSession(v3);
    const r = sessionReport(analyzeSession(s));
    assert.deepEqual(r.requests.map((q) => q.verdict), ['cold', 'hit', 'break']);
    assert.deepEqual([r.requests[2].break!.segment, r.requests[2].break!.byteOffset], ['system', 573]);
    assert.equal(s.persona, undefined); // no ownership row: a plain DSH Session has no persona
    assert.deepEqual(normalizeDsh(await readDshLog(v3)).persona.map((q) => q.headerReason), ['initial', null, 'system/message replace']);
  });

  it('without a request/header, the route comes from request/context; the head stays opaque', async () => {
    const b = new LogBuilder('bh-ctx');
    b.ev('request/context', { provider: 'deepseek-official', model: 'deepseek-v4-pro', contextWindow: 1000000 });
    b.user('Hi.');
    b.ev('assistant/message', { turn: 1, step: 1, content: [{ type: 'text', text: 'Hi.' }], usage: { inputTokens: 90, outputTokens: 2 } }, { surfaceOp: 'append' });
    const s = await readBotHarnessSession(writeLog(built.main, CWD_DIR, 'bh-ctx', b.bytes()));
    assert.deepEqual(s.requests.map((r) => [r.provider, r.model, r.source.line, r.notes?.length]), [['deepseek-official', 'deepseek-v4-pro', 5, 2]]);
  });

  it('an unknown event type: an info diagnostic at its line and a count, the rest read', async () => {
    const s = await readBotHarnessSession(built.logs['bh-stable']);
    assert.deepEqual(s.ignored, { 'telemetry/ping': 1 });
    assert.deepEqual(s.diagnostics.map((d) => [d.line, d.severity, d.message]), [[8, 'info', 'unknown DSH event type "telemetry/ping" ignored (further ones are counted)']]);
    assert.equal(s.requests.length, 3);
  });

  it('a header `change` is a head break located in the system prompt bytes (bh-drift #3)', async () => {
    const r = sessionReport(analyzeSession(await readBotHarnessSession(built.logs['bh-drift'])));
    assert.deepEqual(r.requests.map((q) => q.verdict), ['cold', 'hit', 'break', 'break']);
    const b = r.requests[2].break!;
    // 296 bytes of tools (two tool definitions as JSON), then the system prompt as a JSON string:
    // its first changed byte is the character count in `## Soul (SOUL.md) [1% — 50/…` (byte 277).
    assert.deepEqual([b.segment, b.blockIndex, b.path, b.byteOffset], ['system', 0, 'messages[0].content', 573]);
    assert.equal(b.before, ' Soul (SOUL.md) [1% — 50/5,000 chars]\\n\\nYou are Ada. You answer in short, exa');
    assert.equal(b.after, ' Soul (SOUL.md) [1% — 70/5,000 chars]\\n\\nYou are Ada. You answer in short, exa');
    assert.equal(r.requests[2].segments.tools, r.requests[1].segments.tools);
    assert.notEqual(r.requests[2].segments.system, r.requests[1].segments.system);
  });

  it("the usage roll-up is a cross-check: a bot's day smaller than one Session's own reads is reported", async () => {
    const s = await readBotHarnessSession(built.logs['bh-drift']);
    assert.deepEqual(s.diagnostics.map((d) => [d.line, d.severity, d.message]), [
      [0, 'warning', "usage_daily (dora, 2026-10-08) has cache read 1000 / write 0 tokens, less than this Session's log alone (4096 / 0)"],
    ]);
    const ok = await readBotHarnessSession(built.logs['bh-stable']);
    assert.equal(ok.diagnostics.filter((d) => d.message.startsWith('usage_daily')).length, 0);
  });

  it('a corrupt frame and a cut last frame: diagnostics at their places, the other frames analyzed', async () => {
    const s = await readBotHarnessSession(built.logs['bh-damaged']);
    assert.deepEqual(s.requests.map((r) => [r.index, r.source.line]), [[1, 6], [2, 11]]);
    assert.deepEqual(s.diagnostics.map((d) => [d.line, d.severity, d.message.replace(/ at byte \d+/, ' at byte N')]), [
      [8, 'error', 'corrupt zstd frame #2 at byte N: zstd block of the reserved type; its lines are not read (310 bytes skipped to the next frame; later line numbers count the lines read)'],
      [13, 'warning', 'truncated last zstd frame #4 at byte N (307 of its bytes present; the log may still be being written): its lines are not read'],
    ]);
  });
});
