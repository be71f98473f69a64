/**
 * Captured request bodies as a session of their own (wire evidence, no transcript):
 * a folder of `*.body.json` files, name order = send order, with optional sibling `.meta.json`
 * (the recorder's: `receivedAt`, `responseUsage`, `status`; a capture proxy may add
 * `responseStartedAt` / `responseEndedAt`, ISO times of the response's first and last byte).
 */
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { chainOf } from '../../core/chain.js';
import type { Block, Diagnostic, LlmRequest, Session, Usage } from '../../core/model.js';
import { checkedWireBody, NotARequestBody, WireChains, type CheckedWireBody } from '../../core/wire.js';
import { z } from 'zod';
import { parseBounded } from '../../core/depth.js';
import { FILE_LIMITS, fileErrorText, readRegularFile, readRegularText } from '../files.js';
import { checkMeta } from '../meta.js';
import { minusKnown } from '../numbers.js';
import { claudeSubagentOf, sessionOf, UNNAMED_SUBAGENT } from '../wireconversation.js';
import { bodyFirstMessageHash } from '../wirematch.js';

/** The parts of a recorder `.meta.json` we use; everything else is ignored. */
const MetaSchema = z.looseObject({
  receivedAt: z.string().optional(),
  /** When the response's first byte was sent (its cache entry is readable from then on). */
  responseStartedAt: z.string().optional(),
  /** When the response ended. */
  responseEndedAt: z.string().optional(),
  status: z.number().optional(),
  /** The provider's raw `usage` as returned: `usage` (this project's recorders) or `responseUsage` (older captures). */
  usage: z.record(z.string(), z.unknown()).nullable().optional(),
  responseUsage: z.record(z.string(), z.unknown()).nullable().optional(),
  /** Request kind when the recorder knew it (`agent`, `title`, `summary`). */
  kind: z.string().optional(),
  decision: z.looseObject({ kind: z.string().optional() }).optional(),
});

/** One captured body, parsed. */
export interface CapturedBody {
  file: string;
  /** The body's bytes; empty when the file could not be read (`error` says why). */
  bytes: Uint8Array;
  /** Why the body itself could not be read (not a regular file, too large, unreadable). */
  error?: string;
  meta: z.infer<typeof MetaSchema> | null;
  /** Why a `.meta.json` that exists could not be used (the body is still read, without it). */
  metaError?: string;
  /** Values of the meta that were dropped (meta.ts checkMeta), one sentence each. */
  metaProblems?: string[];
}

/**
 * Lists `*.body.json` files of a folder in name order with their meta. One body that cannot be
 * read (a FIFO, a directory, too large…) is an entry with `error`, never the loss of the others.
 * Read one after the other: a folder of thousands of bodies does not open thousands of files at once.
 * @throws when the folder cannot be listed
 */
export async function readCaptureDir(dir: string): Promise<CapturedBody[]> {
  const out: CapturedBody[] = [];
  for await (const body of captureBodies(dir)) out.push(body);
  return out;
}

/**
 * readCaptureDir one body at a time, so that a reader holds one body's bytes at once (a folder's
 * bodies each repeat the conversation so far: their bytes grow as the square of its length).
 * @throws when the folder cannot be listed
 */
export async function* captureBodies(dir: string): AsyncGenerator<CapturedBody> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.body.json')).sort();
  for (const n of names) {
    const file = join(dir, n);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await readRegularFile(file, FILE_LIMITS.body));
    } catch (e) {
      yield { file, bytes: new Uint8Array(), meta: null, error: fileErrorText(e) };
      continue;
    }
    const metaFile = file.replace(/\.body\.json$/, '.meta.json');
    let text: string;
    try {
      text = await readRegularText(metaFile, FILE_LIMITS.small);
    } catch (e) {
      // No meta: times and usage unknown. A meta that exists but cannot be read says so.
      yield (e as NodeJS.ErrnoException).code === 'ENOENT' ? { file, bytes, meta: null } : { file, bytes, meta: null, metaError: fileErrorText(e) };
      continue;
    }
    try {
      const value = parseBounded(text).value;
      const problems = value && typeof value === 'object' && !Array.isArray(value) ? checkMeta(value as Record<string, unknown>) : [];
      yield { file, bytes, meta: MetaSchema.parse(value), ...(problems.length ? { metaProblems: problems } : {}) };
    } catch (e) {
      yield { file, bytes, meta: null, metaError: e instanceof z.ZodError ? 'unexpected shape' : (e as Error).message };
    }
  }
}

/**
 * Usage as the provider returned it (raw response `usage`), normalized per API — the mapping Pi
 * applies (reference/pi.md §1). Anthropic `input_tokens` excludes cache; OpenAI totals include
 * cached tokens (reference/providers.md §1.2, §1.3). Null when there is no usage object.
 */
export function usageFromResponse(api: string, raw: unknown): Usage | null {
  if (!raw || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  // NaN: a count checkMeta found bad (unknown); absent or null: none (0).
  const num = (v: unknown): number | null => (typeof v === 'number' ? (Number.isNaN(v) ? null : v) : 0);
  if (api === 'anthropic-messages') {
    return { uncached: num(u.input_tokens), cacheRead: num(u.cache_read_input_tokens), cacheWrite: num(u.cache_creation_input_tokens), output: num(u.output_tokens) };
  }
  if (api === 'openai-responses') {
    const d = (u.input_tokens_details ?? {}) as Record<string, unknown>;
    const read = num(d.cached_tokens);
    const write = num(d.cache_write_tokens);
    const uncached = minusKnown(num(u.input_tokens), read, write);
    return { uncached: uncached === null ? null : Math.max(0, uncached), cacheRead: read, cacheWrite: write, output: num(u.output_tokens) };
  }
  const d = (u.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const read = num(d.cached_tokens ?? u.prompt_cache_hit_tokens);
  const write = num(d.cache_write_tokens);
  const uncached = minusKnown(num(u.prompt_tokens), read, write);
  return { uncached: uncached === null ? null : Math.max(0, uncached), cacheRead: read, cacheWrite: write, output: num(u.completion_tokens) };
}

/**
 * A request known only from its captured body (no transcript entry: a summary, a title, a
 * provider-level retry). It points at its body file, line 1.
 * @param chains the reader's chains of its bodies in send order (shared nodes), else a chain of its own
 */
export function wireOnlyRequest(
  body: { file: string; api: string; wire: { model: string; blocks: Block[]; params: LlmRequest['params']; cacheKey?: string } },
  o: { provider: string; kind: LlmRequest['kind']; kindEvidence?: LlmRequest['kindEvidence']; timeMs: number | null; usage: Usage | null; notes: string[] },
  chains?: WireChains,
): LlmRequest {
  const built = chains ? chains.chain(body.wire.blocks) : { tail: chainOf(body.wire.blocks) };
  const req: LlmRequest = {
    index: 0,
    source: { file: body.file, line: 1 },
    provider: o.provider,
    model: body.wire.model,
    api: body.api,
    kind: o.kind,
    timeMs: o.timeMs,
    evidence: 'wire',
    usage: o.usage,
    tail: built.tail,
    params: body.wire.params,
    notes: o.notes,
  };
  if (built.bodyOffsets) req.bodyOffsets = built.bodyOffsets;
  if (body.wire.cacheKey !== undefined) req.cacheKey = body.wire.cacheKey;
  if (o.kindEvidence !== undefined) req.kindEvidence = o.kindEvidence;
  return req;
}

/** ISO time → ms since epoch; null when absent or unreadable (never NaN). */
function msOf(iso: string | undefined): number | null {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(ms) ? ms : null;
}

/** The kind a recorder wrote in the meta, when it is one of ours. */
function recordedKind(k: string | undefined): LlmRequest['kind'] | undefined {
  return k === 'agent' || k === 'summary' || k === 'title' ? k : undefined;
}

/** The start of Codex's compaction prompt, sent after the history without tools (recorded codex body 008). */
const CODEX_COMPACTION_MARK = 'CONTEXT CHECKPOINT COMPACTION';

/**
 * Heuristic kind of a body: summarization prompts and title prompts have no tools. Only the
 * body's start is read (8000 UTF-16 units never take more than 32000 UTF-8 bytes), and its end:
 * a compaction prompt that follows the history comes last (Codex's "CONTEXT CHECKPOINT
 * COMPACTION … handoff summary", sent without tools: recorded body 008).
 */
function kindOf(body: Uint8Array, hasTools: boolean): LlmRequest['kind'] {
  if (hasTools) return 'agent';
  const decoder = new TextDecoder();
  const text = decoder.decode(body.subarray(0, 32000));
  if (/title/i.test(text.slice(0, 4000)) && /generate|title for/i.test(text.slice(0, 4000))) return 'title';
  if (/summar/i.test(text.slice(0, 8000))) return 'summary';
  // At the end, only the compaction prompt itself: a history that merely mentions a summary is not one.
  return decoder.decode(body.subarray(Math.max(0, body.length - 8000))).includes(CODEX_COMPACTION_MARK) ? 'summary' : 'agent';
}

/**
 * Reads a capture folder as one wire-evidence session. Bad bodies become diagnostics.
 * @param ownChains each body's chain built on its own (the straightforward path the shared chains
 *   must equal: test/unit/hosts/capture-shared-chains.test.ts)
 */
export async function readCaptureSession(dir: string, ownChains = false): Promise<Session> {
  const { requests, diagnostics } = await captureRequests(dir, ownChains);
  requests.forEach((x, i) => (x.req.index = i + 1));
  return { host: 'capture', id: basename(dir), path: dir, requests: requests.map((x) => x.req), diagnostics, ignored: {}, events: [] };
}

/**
 * What a request says when its body carries no session header and was read with a conversation
 * other bodies name (readCaptureSessions).
 */
const NO_SESSION_HEADER = 'no session header (capture proxy sessionId, x-claude-code-session-id, x-session-id, session-id)';

/**
 * Reads a capture folder as the conversations its bodies name, each a wire-evidence session of
 * its own, so that no conversation is judged against another's cache entries (a recorder's
 * folder, or a capture day folder, holds several; a sub-agent's tools differ from its parent's).
 * A body names its conversation by the session header the host sent (the capture proxy's meta
 * `sessionId`, else the saved request headers: `x-claude-code-session-id`, OpenCode's
 * `x-session-id`, Codex's `session-id`) and, within it, by its agent: Claude Code's
 * `x-claude-code-agent-id` header (or `cc_is_subagent=true` in its billing header), Codex's
 * `client_metadata.thread_id` when it is not the session's own id. The first conversation is the
 * folder's session (id = the folder's name, as readCaptureSession, which it equals when there is
 * one conversation); the others follow in order of their first body, named by their agent or
 * session id, a sub-agent with `parentId` = the session whose id its bodies send when that is the
 * first conversation's.
 * A body without a session header: one whose agent (Codex thread, Claude Code agent id) is one the
 * folder's other bodies name with a session header (that agent, or that session's own thread) is
 * read with them; one naming nothing belongs to the first conversation, so all of them make at
 * most one session. Either way, when other bodies name a conversation, its request says so in a
 * note (NO_SESSION_HEADER and where it was read).
 * Each body's chain shares the nodes of the previous body's (core/wire.ts WireChains) unless
 * `ownChains` (readCaptureSession).
 */
export async function readCaptureSessions(dir: string, ownChains = false): Promise<Session[]> {
  const { requests, diagnostics } = await captureRequests(dir, ownChains);
  // The conversations bodies with a session header name, by agent and by session (first seen).
  const byAgent = new Map<string, { session: string; agent: string }>();
  const bySession = new Map<string, { session: string; agent: string }>();
  for (const r of requests) {
    if (!r.session) continue;
    if (r.agent) {
      if (!byAgent.has(r.agent)) byAgent.set(r.agent, { session: r.session, agent: r.agent });
    } else if (!bySession.has(r.session)) bySession.set(r.session, { session: r.session, agent: '' });
  }
  const groups = new Map<string, { session: string; agent: string; reqs: LlmRequest[] }>();
  for (const r of requests) {
    let { session, agent } = r;
    const known = !session && agent ? (byAgent.get(agent) ?? bySession.get(agent)) : undefined;
    if (known) {
      ({ session, agent } = known);
      r.req.notes!.push(
        agent
          ? `${NO_SESSION_HEADER}: read with sub-agent ${agent} of session ${session}, as its bodies that carry one`
          : `${NO_SESSION_HEADER}: read with session ${session}, the conversation its thread id names`,
      );
    }
    const key = `${session}\u0000${agent}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { session, agent, reqs: [] }));
    g.reqs.push(r.req);
  }
  const all = [...groups.values()];
  // Bodies naming nothing go with the first conversation that names something (or stand alone).
  const first = all.find((g) => g.session || g.agent) ?? all[0];
  const bare = all.find((g) => !g.session && !g.agent);
  if (bare && first && bare !== first) {
    for (const r of bare.reqs) r.notes!.push(`${NO_SESSION_HEADER}: read with the folder's first conversation (${first.session || first.agent}), as every body that names none`);
    first.reqs = [...bare.reqs, ...first.reqs].sort((a, b) => a.index - b.index);
  }
  const out: Session[] = [];
  for (const g of all) {
    if (g === bare && bare !== first) continue;
    g.reqs.forEach((r, i) => (r.index = i + 1));
    const main = g === first;
    const id = main ? basename(dir) : g.agent || g.session;
    const s: Session = { host: 'capture', id, path: dir, requests: g.reqs, diagnostics: main ? diagnostics : [], ignored: {}, events: [] };
    if (!main) s.title = g.agent ? `sub-agent ${g.agent}` : `session ${g.session}`;
    if (!main && g.agent && first && g.session === first.session) s.parentId = basename(dir);
    out.push(s);
  }
  if (!out.length) out.push({ host: 'capture', id: basename(dir), path: dir, requests: [], diagnostics, ignored: {}, events: [] });
  return out;
}

/** The conversation a body names (see readCaptureSessions): its session and agent, '' when it names none. */
function conversationOf(body: CapturedBody, w: CheckedWireBody["wire"]): { session: string; agent: string } {
  const meta = body.meta as (Record<string, unknown> & { sessionId?: unknown; headers?: unknown }) | null;
  const headers = meta?.headers && typeof meta.headers === 'object' ? (meta.headers as Record<string, string | string[] | undefined>) : {};
  const session = typeof meta?.sessionId === 'string' && meta.sessionId ? meta.sessionId : (sessionOf(headers)?.value ?? '');
  const agent = claudeSubagentOf(headers, w.blocks);
  if (agent === UNNAMED_SUBAGENT) return { session, agent: `${UNNAMED_SUBAGENT}-${(bodyFirstMessageHash(w.blocks) ?? '').slice(0, 12)}` };
  if (agent) return { session, agent };
  return { session, agent: w.thread !== undefined && w.thread !== session ? w.thread : '' };
}

/** Every readable body of a folder as a request (send order), with the conversation it names. */
async function captureRequests(dir: string, ownChains: boolean): Promise<{ requests: Array<{ req: LlmRequest; session: string; agent: string }>; diagnostics: Diagnostic[] }> {
  const diagnostics: Diagnostic[] = [];
  const requests: Array<{ req: LlmRequest; session: string; agent: string }> = [];
  const chains = ownChains ? undefined : new WireChains();
  for await (const body of captureBodies(dir)) {
    if (body.metaError) {
      const file = body.file.replace(/\.body\.json$/, '.meta.json');
      diagnostics.push({ file, line: 1, message: `meta ignored (time and usage unknown): ${body.metaError}`, severity: 'warning' });
    }
    if (body.metaProblems) {
      diagnostics.push({ file: body.file.replace(/\.body\.json$/, '.meta.json'), line: 1, message: `meta values ignored (unknown): ${body.metaProblems.join('; ')}`, severity: 'warning' });
    }
    if (body.error !== undefined) {
      diagnostics.push({ file: body.file, line: 1, message: `request body not read: ${body.error}`, severity: 'error' });
      continue;
    }
    try {
      const checked = checkedWireBody(body.bytes);
      for (const message of checked.warnings) diagnostics.push({ file: body.file, line: 1, message, severity: 'warning' });
      body.bytes = checked.bytes;
      const w = checked.wire;
      const hasTools = w.blocks.some((b) => b.segment === 'tools');
      const recorded = recordedKind(body.meta?.kind);
      const kind = recorded ?? kindOf(body.bytes, hasTools);
      const req = wireOnlyRequest(
        { file: body.file, api: w.api, wire: w },
        {
          provider: w.api.split('-')[0],
          kind,
          // Only a summary or title is a guess: a body is an agent request unless its text says otherwise.
          ...(recorded === undefined && kind !== 'agent' ? { kindEvidence: 'heuristic' as const } : {}),
          timeMs: msOf(body.meta?.receivedAt),
          usage: usageFromResponse(w.api, body.meta?.usage ?? body.meta?.responseUsage),
          notes: [],
        },
        chains,
      );
      req.index = requests.length + 1;
      const started = msOf(body.meta?.responseStartedAt);
      const ended = msOf(body.meta?.responseEndedAt);
      if (started !== null) req.responseStartMs = started;
      if (ended !== null) req.responseEndMs = ended;
      const status = body.meta?.status;
      if (status !== undefined && status >= 400) req.error = `HTTP ${status}`;
      requests.push({ req, ...conversationOf(body, w) });
    } catch (e) {
      diagnostics.push({ file: body.file, line: 1, message: e instanceof NotARequestBody ? `${(e as Error).message}; skipped` : `not a request body: ${(e as Error).message}`, severity: 'error' });
    }
  }
  return { requests, diagnostics };
}
