/**
 * The capture proxy in front of the scripted provider: what the upstream receives and what the
 * agent receives are exactly what they would be without it; what it saves is the body byte for
 * byte, with usage and response id from the stream and no credential; a failing disk or upstream
 * leaves the agent no worse off.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseUpstreams } from '../../../src/capture/route.js';
import { startCaptureServer, topLevelString, type CaptureRecord, type CaptureServer } from '../../../src/capture/server.js';
import { CaptureStore } from '../../../src/capture/store.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { post, startFakeProvider, type FakeProvider } from './harness.js';

const FIX = 'test/fixtures/pi/main/requests';
/** Real bodies Pi sent (one per API) and the path each SDK posts it to. */
const BODIES = [
  { path: '/v1/chat/completions', file: '001-openai-completions.body.json' },
  { path: '/v1/messages', file: '005-anthropic-messages.body.json' },
  { path: '/v1/responses', file: '014-openai-responses.body.json' },
].map((b) => ({ ...b, bytes: readFileSync(join(FIX, b.file)) }));
/** The test's credential: must never reach the disk. */
const KEY = 'sk-test-CAPTURE-7f3a9c1e55d2';
const CREDENTIALS = { authorization: `Bearer ${KEY}`, 'x-api-key': KEY, 'api-key': KEY, cookie: `session=${KEY}`, 'x-goog-api-key': KEY };

const tmp = (p: string) => mkdtempSync(join(tmpdir(), `prefix-lens-${p}-`));

/** Every file below a folder, recursively. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

async function proxyTo(upstream: string, root: string, extra: Partial<Parameters<typeof startCaptureServer>[0]> = {}) {
  const records: CaptureRecord[] = [];
  const warnings: string[] = [];
  const store = new CaptureStore({ root, onWarn: (m) => warnings.push(m), maxBytes: extra.store?.maxBytes });
  const server = await startCaptureServer({ store, port: 0, upstreams: parseUpstreams([upstream]), onRecord: (r) => records.push(r), onWarn: (m) => warnings.push(m), ...extra });
  return { server, store, records, warnings };
}

/** Waits until `n` records arrived (the meta is written after the response ended). */
async function records(list: CaptureRecord[], n: number): Promise<void> {
  for (let i = 0; i < 400 && list.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(list.length, n, `${n} record(s) expected`);
}

describe('capture proxy: in front of the scripted provider', () => {
  let viaProxy: FakeProvider;
  let direct: FakeProvider;
  let proxy: Awaited<ReturnType<typeof proxyTo>>;
  let root: string;
  const seenVia: Array<Awaited<ReturnType<typeof post>>> = [];
  const seenDirect: Array<Awaited<ReturnType<typeof post>>> = [];

  before(async () => {
    [viaProxy, direct] = await Promise.all([startFakeProvider(), startFakeProvider()]);
    root = tmp('capture');
    proxy = await proxyTo(viaProxy.url, root);
    for (const b of BODIES) {
      seenVia.push(await post(`${proxy.server.url}${b.path}`, b.bytes, CREDENTIALS));
      seenDirect.push(await post(`${direct.url}${b.path}`, b.bytes, CREDENTIALS));
    }
    // One more with OpenCode's session header: its own folder.
    seenVia.push(await post(`${proxy.server.url}/v1/chat/completions`, BODIES[0].bytes, { ...CREDENTIALS, 'x-session-id': 'ses_test/../1' }));
    await records(proxy.records, 4);
  });
  after(async () => {
    await proxy.server.close();
    await Promise.all([viaProxy.stop(), direct.stop()]);
  });

  it('the upstream receives each body byte for byte, and the saved body is the same bytes', () => {
    const received = readdirSync(viaProxy.out).filter((f) => f.endsWith('.body.json')).sort();
    assert.deepEqual(received, ['001-openai-completions.body.json', '002-anthropic-messages.body.json', '003-openai-responses.body.json', '004-openai-completions.body.json']);
    const day = readdirSync(root).find((d) => /^\d{4}-\d\d-\d\d$/.test(d))!;
    assert.deepEqual(readdirSync(join(root, day)).sort(), [
      '000001-openai-completions.body.json',
      '000001-openai-completions.meta.json',
      '000002-anthropic-messages.body.json',
      '000002-anthropic-messages.meta.json',
      '000003-openai-responses.body.json',
      '000003-openai-responses.meta.json',
    ]);
    for (const [i, b] of BODIES.entries()) {
      const upstream = readFileSync(join(viaProxy.out, received[i]));
      assert.ok(upstream.equals(b.bytes), `${b.file}: the upstream received other bytes`);
      const saved = readFileSync(join(root, day, `00000${i + 1}-${received[i].slice(4)}`));
      assert.ok(saved.equals(b.bytes), `${b.file}: the saved body differs`);
    }
  });

  it('the agent receives status, content type and every SSE byte exactly as a direct connection does', () => {
    for (let i = 0; i < BODIES.length; i++) {
      assert.equal(seenVia[i].status, 200);
      assert.equal(seenVia[i].headers['content-type'], 'text/event-stream');
      assert.equal(seenVia[i].body.toString('utf8'), seenDirect[i].body.toString('utf8'), BODIES[i].file);
      assert.ok(seenVia[i].body.length > 500);
    }
  });

  it('the meta has route, status, the usage the provider returned, the response id and send/response times', () => {
    const byN = new Map(proxy.records.filter((r) => !r.meta.sessionId).map((r) => [r.meta.n, r]));
    const providerMeta = (f: string) => JSON.parse(readFileSync(join(viaProxy.out, f.replace('.body.', '.meta.')), 'utf8')) as { usage: unknown };
    const expected = [
      ['openai-completions', '/v1/chat/completions', 'chatcmpl-fake-1', '001-openai-completions.body.json'],
      ['anthropic-messages', '/v1/messages', 'msg_fake_2', '002-anthropic-messages.body.json'],
      ['openai-responses', '/v1/responses', 'resp_fake_3', '003-openai-responses.body.json'],
    ];
    for (const [i, [api, route, id, file]] of expected.entries()) {
      const m = byN.get(i + 1)!.meta;
      assert.equal(m.api, api);
      assert.equal(m.route, route);
      assert.equal(m.status, 200);
      assert.equal(m.responseId, id);
      assert.deepEqual(m.usage, providerMeta(file).usage, `${api}: usage`);
      assert.equal(m.bodyBytes, BODIES[i].bytes.length);
      assert.ok(Date.parse(m.receivedAt as string) <= Date.parse(m.responseStartedAt as string));
      assert.ok(Date.parse(m.responseStartedAt as string) <= Date.parse(m.responseEndedAt as string));
    }
  });

  it('a request with a session header goes to that session’s folder (unsafe characters replaced)', () => {
    const r = proxy.records.find((x) => x.meta.sessionId)!;
    assert.equal(r.meta.sessionHeader, 'x-session-id');
    assert.equal(r.meta.sessionId, 'ses_test/../1');
    assert.deepEqual(readdirSync(join(root, 'session-ses_test_.._1')), ['000001-openai-completions.body.json', '000001-openai-completions.meta.json']);
  });

  it('credentials never reach the disk: the key is in no saved file; the headers say <redacted>', () => {
    const files = filesBelow(root);
    assert.equal(files.length, 8);
    for (const f of files) assert.ok(!readFileSync(f, 'utf8').includes(KEY), `${f} holds the key`);
    const h = proxy.records[0].meta.headers as Record<string, string>;
    for (const k of Object.keys(CREDENTIALS)) assert.equal(h[k], '<redacted>', k);
    assert.equal(h['content-type'], 'application/json');
  });

  it('folders are 0700 and files 0600', () => {
    assert.equal(statSync(root).mode & 0o777, 0o700);
    for (const d of readdirSync(root)) assert.equal(statSync(join(root, d)).mode & 0o777, 0o700, d);
    for (const f of filesBelow(root)) assert.equal(statSync(f).mode & 0o777, 0o600, f);
  });

  it('the saved folder reads as a wire session with the provider’s usage', async () => {
    const day = readdirSync(root).find((d) => /^\d{4}-/.test(d))!;
    const s = await readCaptureSession(join(root, day));
    assert.deepEqual(s.diagnostics, []);
    assert.deepEqual(s.requests.map((r) => [r.api, r.evidence, r.model]), [
      ['openai-completions', 'wire', 'gpt-5'],
      ['anthropic-messages', 'wire', 'claude-sonnet-4-5'],
      ['openai-responses', 'wire', 'gpt-5-codex'],
    ]);
    // The scripted provider's synthetic usage for these bodies, normalized per API.
    assert.deepEqual(s.requests.map((r) => [r.usage, r.responseStartMs !== undefined]), [
      [{ uncached: 1567, cacheRead: 0, cacheWrite: 0, output: 9 }, true],
      [{ uncached: 0, cacheRead: 0, cacheWrite: 2413, output: 17 }, true],
      [{ uncached: 2277, cacheRead: 0, cacheWrite: 0, output: 11 }, true],
    ]);
  });

  it('an upstream HTTP 500 reaches the agent as the upstream sent it, and is saved with its status', async () => {
    const body = Buffer.from(JSON.stringify({ model: 'claude-x', stream: true, max_tokens: 10, messages: [{ role: 'user', content: 'FAIL500 please' }] }));
    const via = await post(`${proxy.server.url}/v1/messages`, body);
    const straight = await post(`${direct.url}/v1/messages`, body);
    assert.equal(via.status, 500);
    assert.equal(via.body.toString(), straight.body.toString());
    assert.match(via.body.toString(), /scripted 500/);
    await records(proxy.records, 5);
    assert.equal(proxy.records[4].meta.status, 500);
    assert.equal(proxy.records[4].meta.usage, null);
  });
});

describe('capture proxy: streaming, failures and pruning', () => {
  it('streams: the agent has the first SSE chunk while the upstream is still answering', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_gate","usage":{"input_tokens":3}}}\n\n');
        await gate; // only once the agent saw the first chunk
        res.end('event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":2}}\n\n');
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const p = await proxyTo(`http://127.0.0.1:${(upstream.address() as { port: number }).port}`, tmp('capture-stream'));
    let firstBeforeEnd = false;
    const seen = await post(`${p.server.url}/v1/messages`, '{"model":"m","messages":[]}', {}, (c, i) => {
      if (i === 0) {
        firstBeforeEnd = c.toString().startsWith('event: message_start') && !c.toString().includes('message_delta');
        release();
      }
    });
    await records(p.records, 1);
    assert.ok(firstBeforeEnd, 'the first chunk arrived alone, before the upstream ended');
    assert.equal(seen.chunks.length, 2);
    assert.deepEqual(p.records[0].meta.usage, { input_tokens: 3, output_tokens: 2 });
    assert.equal(p.records[0].meta.responseId, 'msg_gate');
    await p.server.close();
    await new Promise((r) => upstream.close(r));
  });

  it('reads usage from a gzip-compressed JSON answer and passes the compressed bytes on untouched', async () => {
    const answer = gzipSync(JSON.stringify({ id: 'chatcmpl-z', usage: { prompt_tokens: 2000, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 1024 } } }));
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': answer.length });
        res.end(answer);
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const p = await proxyTo(`http://127.0.0.1:${(upstream.address() as { port: number }).port}`, tmp('capture-gzip'));
    const seen = await post(`${p.server.url}/v1/chat/completions`, '{"model":"m","messages":[]}');
    await records(p.records, 1);
    assert.ok(seen.body.equals(answer));
    assert.equal(seen.headers['content-length'], String(answer.length));
    assert.equal(p.records[0].meta.responseId, 'chatcmpl-z');
    assert.deepEqual(p.records[0].meta.usage, { prompt_tokens: 2000, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 1024 } });
    await p.server.close();
    await new Promise((r) => upstream.close(r));
  });

  it('an unreachable upstream: the agent gets a 502 whose body says why; the request is still saved', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const root = tmp('capture-refused');
    const p = await proxyTo(`http://127.0.0.1:${port}`, root);
    const anth = await post(`${p.server.url}/v1/messages`, '{"model":"m","messages":[]}');
    const oai = await post(`${p.server.url}/v1/responses`, '{"model":"m","input":[]}');
    await records(p.records, 2);
    assert.equal(anth.status, 502);
    assert.deepEqual(JSON.parse(anth.body.toString()), { type: 'error', error: { type: 'api_error', message: `prefix-lens capture: upstream http://127.0.0.1:${port}/v1/messages unreachable: ECONNREFUSED` } });
    assert.equal(oai.status, 502);
    assert.equal((JSON.parse(oai.body.toString()) as { error: { type: string } }).error.type, 'upstream_unreachable');
    assert.equal(p.records[0].meta.status, 502);
    assert.match(String(p.records[0].meta.error), /ECONNREFUSED/);
    assert.equal(p.store.saved, 2);
    await p.server.close();
  });

  it('a failing disk: every request still goes through with the full answer, one warning only', async () => {
    const provider = await startFakeProvider();
    const dir = tmp('capture-disk');
    writeFileSync(join(dir, 'file'), 'not a folder');
    // The capture root lies below a regular file: nothing can be created there (root or not).
    const p = await proxyTo(provider.url, join(dir, 'file', 'captures'));
    const direct = await startFakeProvider();
    for (let i = 0; i < 3; i++) {
      const via = await post(`${p.server.url}/v1/messages`, BODIES[1].bytes);
      const straight = await post(`${direct.url}/v1/messages`, BODIES[1].bytes);
      assert.equal(via.status, 200);
      assert.equal(via.body.toString(), straight.body.toString());
    }
    assert.equal(readdirSync(provider.out).filter((f) => f.endsWith('.body.json')).length, 3);
    // The slot is looked for beside the forwarding: the last failure may come after its answer.
    for (let i = 0; i < 200 && p.store.failures < 3; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(p.warnings.length, 1);
    assert.match(p.warnings[0], /^cannot create .*file\/captures.*ENOTDIR.*the request is still forwarded/);
    assert.equal(p.store.failures, 3);
    assert.equal(p.store.saved, 0);
    await p.server.close();
    await Promise.all([provider.stop(), direct.stop()]);
  });

  it('a folder that turns unwritable mid-run: the next requests go through, one warning per kind', async () => {
    const provider = await startFakeProvider();
    const root = tmp('capture-unwritable');
    const p = await proxyTo(provider.url, root);
    await post(`${p.server.url}/v1/messages`, BODIES[1].bytes);
    await records(p.records, 1);
    const day = readdirSync(root)[0];
    // The next numbers are taken by folders: both the body and the meta writes fail.
    for (const n of ['000002', '000003']) {
      for (const k of ['body', 'meta']) (await import('node:fs')).mkdirSync(join(root, day, `${n}-anthropic-messages.${k}.json`));
    }
    for (let i = 0; i < 2; i++) assert.equal((await post(`${p.server.url}/v1/messages`, BODIES[1].bytes)).status, 200);
    await records(p.records, 3);
    assert.equal(p.warnings.length, 2);
    assert.match(p.warnings[0], /^cannot save .*000002-anthropic-messages\.body\.json: EEXIST/);
    assert.match(p.warnings[1], /^cannot save .*000002-anthropic-messages\.meta\.json: EEXIST/);
    assert.equal(p.store.saved, 1);
    await p.server.close();
    await provider.stop();
  });

  it('prunes the oldest requests first once the root is over its cap', async () => {
    const root = tmp('capture-prune');
    const store = new CaptureStore({ root, maxBytes: 10_000 });
    await store.open();
    const body = Buffer.alloc(2000, 'x');
    const slots = [];
    for (let i = 0; i < 6; i++) {
      const s = (await store.allocate('2026-12-01', 'anthropic-messages'))!;
      await store.saveBody(s, body);
      await store.saveMeta(s, { n: s.n });
      slots.push(s);
      await new Promise((r) => setTimeout(r, 15)); // distinct mtimes
    }
    const left = readdirSync(join(root, '2026-12-01')).sort();
    // 6 × (2000 + meta) > 10,000: the oldest go until ≤ 9,000 bytes remain.
    assert.deepEqual(left.filter((f) => f.endsWith('.body.json')), ['000003-anthropic-messages.body.json', '000004-anthropic-messages.body.json', '000005-anthropic-messages.body.json', '000006-anthropic-messages.body.json']);
    assert.ok(store.bytes <= 9000, `${store.bytes} bytes left`);
    // A new store on the same root counts what is there and numbers after it.
    const again = new CaptureStore({ root });
    await again.open();
    assert.equal(again.bytes, store.bytes);
    assert.equal((await again.allocate('2026-12-01', 'anthropic-messages'))!.n, 7);
  });

  it('numbers requests in call order without blocking, and a folder that cannot be made is a warning, never a hang', async () => {
    const root = tmp('capture-order');
    const warnings: string[] = [];
    const store = new CaptureStore({ root, onWarn: (m) => warnings.push(m) });
    const slots = await Promise.all([1, 2, 3].map(() => store.allocate('session-a', 'openai-completions')));
    assert.deepEqual(slots.map((x) => x!.n), [1, 2, 3]);
    assert.equal(statSync(join(root, 'session-a')).mode & 0o777, 0o700);
    // A root below a regular file, and one on /proc (where Node's recursive mkdir never returns).
    for (const bad of [join(root, 'session-a', '000001-x', 'sub'), '/proc/prefix-lens-no-such/captures']) {
      writeFileSync(join(root, 'session-a', '000001-x'), '');
      const s = new CaptureStore({ root: bad, onWarn: (m) => warnings.push(m) });
      assert.equal(await s.allocate('2026-12-01', 'anthropic-messages'), null);
    }
    assert.equal(warnings.length, 2);
    assert.match(warnings[1], /^cannot create \/proc\/prefix-lens-no-such\/captures\/2026-12-01: /);
  });

  it('topLevelString reads a top-level member without parsing the rest, and nothing nested', () => {
    const b = (s: string) => Buffer.from(s);
    assert.equal(topLevelString(b('{"model":"claude-sonnet-4-5","messages":[]}'), 'model'), 'claude-sonnet-4-5');
    assert.equal(topLevelString(b(' {"messages":[{"model":"x","c":"}]{"}],"m\\"":1, "model" : "gpt-\\u0035"}'), 'model'), 'gpt-5');
    assert.equal(topLevelString(b('{"messages":[{"model":"nested"}]}'), 'model'), null);
    assert.equal(topLevelString(b('{"model":5}'), 'model'), null);
    assert.equal(topLevelString(b('[{"model":"a"}]'), 'model'), null);
    assert.equal(topLevelString(b('{"model":"cut'), 'model'), null);
    // Stops at the member: what follows need not even be JSON.
    assert.equal(topLevelString(b('{"model":"m",' + '!'.repeat(100)), 'model'), 'm');
  });
});
