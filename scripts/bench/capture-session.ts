/**
 * Writes a generated capture folder for the wire-mode scaling figures of README "Scaling per host":
 * the OpenCode 1.18 Chat Completions body of the recording (test/fixtures/opencode-capture, body 6:
 * 31.8 KB of system prompt and tools) grown by one user/assistant turn per request, each body the
 * whole conversation so far (the folder's bytes grow as N²), with a meta per body (times, usage
 * as a prefix cache would report it, the session header).
 *
 *   npx tsx scripts/bench/capture-session.ts OUT_DIR BODIES
 *
 * Writes OUT_DIR/capture-<BODIES>/ and prints its path (`node dist/cli.js analyze DIR --json --no-cache`).
 *
 * writeClaudeJoinSession: a Claude Code session with its capture folder, for the join's figures
 * (`npm run bench:capture -- --join N`, scripts/bench-capture.ts).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { folderName } from '../../src/capture/store.js';
import { canonicalHash } from '../../src/hosts/claude-code/normalize.js';

const RECORDED = 'test/fixtures/opencode-capture/captures/session-ses_dcdc9b833ffegPxlqBVR4iOzp5/000006-openai-completions';

/** Writes `bodies` bodies and metas into `dir`. */
export function writeCaptureSession(dir: string, bodies: number): void {
  mkdirSync(dir, { recursive: true });
  const base = JSON.parse(readFileSync(`${RECORDED}.body.json`, 'utf8')) as { messages: object[] } & Record<string, unknown>;
  const meta = JSON.parse(readFileSync(`${RECORDED}.meta.json`, 'utf8')) as Record<string, unknown>;
  const messages = base.messages.slice(0, -1);
  const t0 = Date.UTC(2026, 11, 1, 15, 0, 0);
  let bytes = 0;
  for (let i = 1; i <= bodies; i++) {
    messages.push({ role: 'user', content: `Turn ${i}: read src/module-${i}.ts and say what the exported function returns for an empty input.` });
    const body = JSON.stringify({ ...base, messages });
    const name = `${String(i).padStart(6, '0')}-openai-completions`;
    writeFileSync(join(dir, `${name}.body.json`), body);
    const prompt = Math.round(body.length / 4);
    const at = (ms: number) => new Date(t0 + i * 5000 + ms).toISOString();
    writeFileSync(
      join(dir, `${name}.meta.json`),
      JSON.stringify({ ...meta, n: i, receivedAt: at(0), responseStartedAt: at(40), responseEndedAt: at(900), usage: { prompt_tokens: prompt, completion_tokens: 20, total_tokens: prompt + 20, prompt_tokens_details: { cached_tokens: i > 1 ? Math.floor((prompt - 40) / 128) * 128 : 0 } }, bodyBytes: Buffer.byteLength(body), bodySha256: undefined }),
    );
    bytes += body.length;
    messages.push({ role: 'assistant', content: `Scripted reply ${i}: module-${i}.ts exports parse(), which returns an empty list for an empty input.` });
  }
  process.stderr.write(`${bodies} bodies, ${(bytes / 1e6).toFixed(1)} MB\n`);
}

if (process.argv[1] && /capture-session\.ts$/.test(process.argv[1])) {
  const [out, n] = process.argv.slice(2);
  const dir = join(out, `capture-${n}`);
  writeCaptureSession(dir, Number(n));
  console.log(dir);
}

const CC = 'test/fixtures/claude-code';
const CC_SESSION = '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6';

/** What writeClaudeJoinSession wrote. */
export interface ClaudeJoinSession {
  /** The transcript (`<dir>/claude/projects/-gen/<session>.jsonl`). */
  transcript: string;
  /** The capture root (`--captures`); its one folder `session-<id>` is the `--requests` folder. */
  captures: string;
  requests: string;
  /** Bodies written (requests + failed attempts). */
  bodies: number;
  /** Bytes of all bodies. */
  bytes: number;
}

/**
 * Writes a Claude Code 2.1.328 session of `turns` requests and its capture folder, for the
 * `--requests DIR` / `--captures ROOT` join's scaling figures: the recording's first request
 * (test/fixtures/claude-code: its head, 21.8k tokens of system and tools, and first message), then
 * `turns − 1` turns of a user prompt and a text answer, each one `api-request` line (the previous
 * request's messages kept, the answer and the new prompt as its tail) with its blob and response,
 * and each body the recording's first body with the conversation so far (cache mark on the last
 * message, an unmarked one-text user message as a string: as Claude Code sends them). Each meta carries the response id (`msg_gen_<i>`), the session
 * header and a usage; `failEvery` K > 0: before every Kth turn an HTTP 500 attempt with the same
 * bytes and no response id (Claude Code retries it; the transcript has one request).
 * `responseIds: false` leaves the response ids out of the metas (a proxy that saw no response id,
 * e.g. a cut stream): every body is then matched by its prefix hash.
 */
export function writeClaudeJoinSession(dir: string, turns: number, opts: { failEvery?: number; responseIds?: boolean } = {}): ClaudeJoinSession {
  const failEvery = opts.failEvery ?? 10;
  const withIds = opts.responseIds ?? true;
  const lines = readFileSync(join(CC, 'claude/projects/-tmp-prefix-lens-cc-lab-project', `${CC_SESSION}.jsonl`), 'utf8').split('\n').filter(Boolean);
  // The first turn as recorded: everything before the second prompt's queue line.
  const first = lines.slice(0, lines.findIndex((l, i) => i > 2 && l.includes('"queue-operation"')));
  const firstApi = JSON.parse(first.find((l) => l.includes('"type":"api-request"'))!) as Record<string, unknown>;
  const firstAnswer = JSON.parse(first.find((l) => l.includes('"type":"assistant"'))!) as { uuid: string; message: { content: unknown[] } };
  const body0 = JSON.parse(readFileSync(join(CC, 'requests/001-anthropic-messages.body.json'), 'utf8')) as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> } & Record<string, unknown>;
  const meta0 = JSON.parse(readFileSync(join(CC, 'requests/002-anthropic-messages.meta.json'), 'utf8')) as Record<string, unknown>;
  const projects = join(dir, 'claude', 'projects', '-gen');
  const captures = join(dir, 'captures');
  const requests = join(captures, folderName(CC_SESSION, 0));
  mkdirSync(projects, { recursive: true });
  mkdirSync(requests, { recursive: true });
  const t0 = Date.UTC(2026, 11, 1, 9, 58, 48);
  const iso = (ms: number) => new Date(t0 + ms).toISOString();
  const common = { userType: 'external', entrypoint: 'sdk-cli', cwd: '/tmp/prefix-lens-cc-lab/project', sessionId: CC_SESSION, version: '2.1.328', gitBranch: 'HEAD' };
  const uuid = (kind: number, i: number) => `00000000-0000-4000-${String(kind).padStart(4, '0')}-${String(i).padStart(12, '0')}`;
  const out: string[] = [...first];
  // The body's messages so far (cache marks stripped; the last message's last part is marked when sent).
  const messages = structuredClone(body0.messages).map((m) => ({ ...m, content: m.content.map(({ cache_control: _, ...p }) => p) }));
  let count = 1; // messages of the previous request
  let parent = firstAnswer.uuid;
  let answer = { role: 'assistant', content: firstAnswer.message.content };
  let n = 0;
  let bytes = 0;
  const save = (i: number, body: string, failed: boolean) => {
    const name = `${String(++n).padStart(6, '0')}-anthropic-messages`;
    writeFileSync(join(requests, `${name}.body.json`), body);
    bytes += body.length;
    const prompt = Math.round(body.length / 4);
    const meta: Record<string, unknown> = { ...meta0, n, receivedAt: iso(i * 5000 + (failed ? 0 : 300)), bodyBytes: Buffer.byteLength(body), bodySha256: undefined, decision: undefined };
    if (failed) Object.assign(meta, { status: 500, responseId: undefined, usage: undefined });
    else Object.assign(meta, { status: 200, responseId: withIds ? (i === 1 ? 'msg_fake_1' : `msg_gen_${i}`) : undefined, usage: { input_tokens: 3, cache_creation_input_tokens: 60, cache_read_input_tokens: prompt - 63, output_tokens: 20 } });
    writeFileSync(join(requests, `${name}.meta.json`), JSON.stringify(meta));
  };
  const send = (i: number) => {
    const last = messages.length - 1;
    // An unmarked user message of one text part goes as a string (Claude Code's form; normalize.ts asSent).
    const marked = messages.map((m, k) =>
      k === last ? { ...m, content: m.content.map((p, j) => (j === m.content.length - 1 ? { ...p, cache_control: { type: 'ephemeral' } } : p)) } : m.role === 'user' && m.content.length === 1 && m.content[0].type === 'text' ? { ...m, content: m.content[0].text } : m,
    );
    return JSON.stringify({ ...body0, messages: marked });
  };
  save(1, send(1), false);
  for (let i = 2; i <= turns; i++) {
    const ms = i * 5000;
    const text = `Turn ${i}: read src/module-${i}.ts and say what the exported function returns for an empty input.`;
    const user = { role: 'user', content: [{ type: 'text', text }] };
    messages.push(answer as (typeof messages)[number], user);
    const userUuid = uuid(1, i);
    out.push(JSON.stringify({ parentUuid: parent, isSidechain: false, promptId: uuid(2, i), type: 'user', message: { role: 'user', content: text }, uuid: userUuid, timestamp: iso(ms - 100), permissionMode: 'default', promptSource: 'sdk', ...common }));
    const ah = canonicalHash(answer);
    const uh = canonicalHash(user);
    out.push(JSON.stringify({ type: 'api-request-blob', sessionId: CC_SESSION, hash: uh, message: user }));
    const apiId = uuid(3, i);
    out.push(JSON.stringify({ ...firstApi, id: apiId, timestamp: iso(ms), keep: count, tail: [ah, uh], cacheControl: [...(firstApi.cacheControl as object[]).slice(0, 2), { path: ['messages', messages.length - 1, 'content', 0], value: { type: 'ephemeral' } }], requestDigest: undefined }));
    count += 2;
    const body = send(i);
    if (failEvery > 0 && i % failEvery === 0) save(i, body, true);
    save(i, body, false);
    const reply = [{ type: 'text', text: `Scripted reply ${i}: module-${i}.ts exports parse(), which returns an empty list for an empty input.` }];
    const prompt = Math.round(body.length / 4);
    parent = uuid(4, i);
    out.push(JSON.stringify({ parentUuid: userUuid, isSidechain: false, message: { id: `msg_gen_${i}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: reply, stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, cache_creation_input_tokens: 60, cache_read_input_tokens: prompt - 63, output_tokens: 20 } }, apiBlockIndex: 0, requestId: `req_gen_${i}`, requestRef: apiId, requestedModel: 'claude-sonnet-4-5', promptCacheRequested: '5m', type: 'assistant', uuid: parent, timestamp: iso(ms + 800), ...common }));
    answer = { role: 'assistant', content: reply };
  }
  const transcript = join(projects, `${CC_SESSION}.jsonl`);
  writeFileSync(transcript, out.map((l) => `${l}\n`).join(''));
  return { transcript, captures, requests, bodies: n, bytes };
}
