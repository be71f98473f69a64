/**
 * Wire mode for transcript hosts that record (nearly) the whole request (Claude Code 2.1.3xx,
 * Codex): captured request bodies replace the reconstructed requests they match, and bodies the
 * transcript has no request for (Claude Code's compaction call, …) become wire-only requests.
 *
 * Input: a folder of `NNN-<api>.body.json` (name order = send order) with optional sibling
 * `NNN-<api>.meta.json` (`responseId`, `status`, `usage`), as the recorders write it.
 * A body matches a request, in this order:
 *  1. the meta's `responseId` equals the request's response id;
 *  2. its whole prefix hashes the same as the reconstruction (same model), the first such request
 *     in send order not yet matched (a retried request sends the same bytes twice).
 * The sessions of one ref (a main session and its sub-agents) are matched together, so a
 * sub-agent's bodies go to the sub-agent. An unmatched body goes where the host says
 * (`Unmatched`): into the first (main) session when it continues that conversation (a
 * compaction call, a failed attempt), or into the session of the conversation it names (a
 * sub-agent's, made when the ref has no transcript for it), so it is never judged against
 * another conversation's cache lineage.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { chainOf, type BlockNode } from '../core/chain.js';
import type { Block, Diagnostic, LlmRequest, RequestKind, Session } from '../core/model.js';
import { checkedWireBody, NotARequestBody, type WireApi, type WireRequest } from '../core/wire.js';
import { plural } from '../plural.js';
import { usageFromResponse, wireOnlyRequest } from './capture/index.js';
import { FILE_LIMITS, readRegularFile } from './files.js';
import { readMetaObject } from './meta.js';

/** One captured body. */
export interface CapturedRequest {
  file: string;
  /** Number from the file name (send order). */
  n: number;
  wire?: WireRequest & { api: WireApi };
  meta?: Record<string, unknown>;
  responseId?: string;
}

const API_IN_NAME = /^(\d+)-(anthropic-messages|openai-responses|openai-completions)\.body\.json$/;

/**
 * Where captured bodies come from: a folder (`--requests DIR`: name order = send order, the
 * number in the name is the request number), or body files already in send order, possibly from
 * several folders (the capture join, src/hosts/capturejoin.ts: numbered by position).
 */
export type RequestSource = string | { label: string; files: string[] };

/** How a source is named in diagnostics. */
export function sourceLabel(src: RequestSource): string {
  return typeof src === 'string' ? src : src.label;
}

/**
 * The body files of a source in send order with their request number: a folder's `*.body.json`
 * in name order (number from the name, else the position), a list as given (number = position).
 * @throws when the folder cannot be listed
 */
export async function bodyFiles(src: RequestSource): Promise<Array<{ file: string; name: string; n: number }>> {
  if (typeof src !== 'string') return src.files.map((file, i) => ({ file, name: basename(file), n: i + 1 }));
  const names = (await readdir(src)).filter((f) => f.endsWith('.body.json')).sort();
  return names.map((name, i) => {
    const m = /^(\d+)-/.exec(name);
    return { file: join(src, name), name, n: m ? Number(m[1]) : i + 1 };
  });
}

/**
 * The diagnostic for a `--requests` folder that holds no `*.body.json` at all (a wrong folder, or
 * another recorder's layout): the requests stay reconstructed, and the user is told why. Null for
 * a folder with bodies, and for the capture join's lists (never empty).
 */
export function noBodiesDiagnostic(src: RequestSource, count: number): Diagnostic | null {
  if (typeof src !== 'string' || count > 0) return null;
  return { file: src, line: 0, severity: 'warning', message: `no captured request bodies (*.body.json) in ${src}: the requests are reconstructed from the transcript` };
}

/** Reads the bodies of a source in send order; unreadable or non-JSON bodies become diagnostics. */
export async function readBodies(src: RequestSource, diagnostics: Diagnostic[]): Promise<CapturedRequest[]> {
  const out: CapturedRequest[] = [];
  for (const { file, name, n } of await bodyFiles(src)) {
    const m = API_IN_NAME.exec(name);
    const b: CapturedRequest = { file, n };
    b.meta = await readMetaObject(file.replace(/\.body\.json$/, '.meta.json'), diagnostics);
    if (typeof b.meta?.responseId === 'string' && b.meta.responseId) b.responseId = b.meta.responseId;
    try {
      const checked = checkedWireBody(await readRegularFile(file, FILE_LIMITS.body), m ? (m[2] as WireApi) : undefined);
      for (const message of checked.warnings) diagnostics.push({ file, line: 1, severity: 'warning', message });
      b.wire = checked.wire;
    } catch (e) {
      diagnostics.push({ file, line: 1, severity: 'error', message: e instanceof NotARequestBody ? `${e.message}; skipped` : `request body not used: ${e instanceof Error ? e.message : String(e)}` });
    }
    out.push(b);
  }
  return out;
}

/**
 * How a host names what the transcript did not record: kind and note of an unmatched body; null
 * when the body belongs to another session (e.g. another conversation's cache key): left out.
 * `conversation`: the body belongs to another conversation of this ref (a sub-agent): it goes
 * to the session with that id, made (with `title`, `parentId` = the main session, and `note` as
 * its diagnostic) when the ref has none. `ctx.sameConversation`: the body's first message is
 * the first message of a request of the main session (the same conversation). `kindEvidence`:
 * `heuristic` when the host recognized the kind by the body's text (LlmRequest.kindEvidence).
 */
export type Unmatched = (
  b: CapturedRequest,
  ctx: { sameConversation: boolean; firstMessage: string | null },
) => { kind: RequestKind; kindEvidence?: 'heuristic'; note: string; provider: string; conversation?: { id: string; title: string; note: string } } | null;

/** SHA-256 (hex) of the bytes of the first messages-segment block of a chain (walked from its start), null when it has none. */
export function firstMessageHash(tail: BlockNode | null): string | null {
  for (let d = 1; tail && d <= tail.depth; d++) {
    const b = tail.at(d)!.block;
    if (b.segment === 'messages') return createHash('sha256').update(b.bytes).digest('hex');
  }
  return null;
}

/** firstMessageHash of a body's blocks (render order). */
export function bodyFirstMessageHash(blocks: Block[]): string | null {
  const b = blocks.find((x) => x.segment === 'messages');
  return b ? createHash('sha256').update(b.bytes).digest('hex') : null;
}

/**
 * Replaces the requests of `sessions` (one ref) with the captured bodies they match.
 * @returns new sessions (same order); requests renumbered per session in send order
 */
export async function withWire(sessions: Session[], src: RequestSource, unmatched: Unmatched): Promise<Session[]> {
  const diagnostics: Diagnostic[] = [];
  const dir = sourceLabel(src);
  let bodies: CapturedRequest[];
  try {
    bodies = await readBodies(src, diagnostics);
  } catch (e) {
    const d: Diagnostic = { file: dir, line: 1, severity: 'error', message: `cannot read captured request bodies: ${e instanceof Error ? e.message : String(e)}; requests reconstructed` };
    return sessions.map((s, i) => (i === 0 ? { ...s, diagnostics: [...s.diagnostics, d] } : s));
  }
  const none = noBodiesDiagnostic(src, bodies.length);
  if (none) return sessions.map((s, i) => (i === 0 ? { ...s, diagnostics: [...s.diagnostics, ...diagnostics, none] } : s));
  const chains = new Map<CapturedRequest, BlockNode | null>();
  const bodyOf = matchRequests(
    sessions.flatMap((s) => s.requests),
    bodies,
    chains,
  );
  const taken = new Set(bodyOf.values());
  if (bodies.length && !bodyOf.size) {
    diagnostics.push({ file: dir, line: 0, severity: 'error', message: `none of the ${plural(bodies.length, 'captured body')} matches a request of ${basename(sessions[0]?.path ?? '')}; ignored (reconstructed from the transcript instead)` });
    return sessions.map((s, i) => (i === 0 ? { ...s, diagnostics: [...s.diagnostics, ...diagnostics] } : s));
  }
  // The main conversation's first messages (as sent where a body matched), to tell an unmatched
  // body of that conversation from one of another (a sub-agent whose transcript is missing).
  const main = sessions[0];
  const mainFirsts = new Set<string>();
  for (const r of main?.requests ?? []) {
    const b = bodyOf.get(r);
    const h = b?.wire ? bodyFirstMessageHash(b.wire.blocks) : firstMessageHash(r.tail);
    if (h !== null) mainFirsts.add(h);
  }
  // Unmatched bodies by the session they go to: an index into `sessions`, or a new session's id.
  const extra = new Map<number | string, Array<{ b: CapturedRequest; req: LlmRequest }>>();
  const made = new Map<string, Session>();
  for (const b of bodies) {
    if (taken.has(b) || !b.wire || !main) continue;
    const first = bodyFirstMessageHash(b.wire.blocks);
    const u = unmatched(b, { sameConversation: first !== null && mainFirsts.has(first), firstMessage: first });
    if (!u) continue;
    const status = typeof b.meta?.status === 'number' ? b.meta.status : undefined;
    const req = wireOnlyRequest(
      { file: b.file, api: b.wire.api, wire: b.wire },
      { provider: u.provider, kind: u.kind, ...(u.kindEvidence !== undefined ? { kindEvidence: u.kindEvidence } : {}), timeMs: msOf(b.meta?.receivedAt), usage: status !== undefined && status >= 400 ? null : usageFromResponse(b.wire.api, b.meta?.usage), notes: [`wire: ${basename(b.file)}`, u.note] },
    );
    if (b.responseId) req.responseId = b.responseId;
    if (status !== undefined && status >= 400) req.error = `HTTP ${status}`;
    let to: number | string = 0;
    if (u.conversation) {
      const c = u.conversation;
      const at = sessions.findIndex((s) => s.id === c.id);
      to = at >= 0 ? at : c.id;
      if (at < 0 && !made.has(c.id)) {
        const s: Session = { host: main.host, id: c.id, path: b.file, title: c.title, parentId: main.id, requests: [], diagnostics: [{ file: b.file, line: 1, severity: 'warning', message: c.note }], ignored: {}, events: [] };
        if (main.cwd) s.cwd = main.cwd;
        made.set(c.id, s);
      }
    }
    // Numbered after the transcript's requests (core/numbering.ts), unless its session has no transcript (made from bodies alone).
    if (typeof to === 'number') req.wireOnly = true;
    if (!extra.has(to)) extra.set(to, []);
    extra.get(to)!.push({ b, req });
  }
  const out = sessions.map((s, si) => {
    // Send order: a matched request sorts at its body's number, a request without a body right
    // after the one before it; unmatched bodies at their number.
    const items: Array<{ key: number; req: LlmRequest }> = [];
    let last = 0;
    for (const r of s.requests) {
      const b = bodyOf.get(r);
      if (b) last = b.n;
      items.push({ key: b ? b.n : last + 0.5, req: b ? fromBody(r, b, chains.get(b)) : { ...r, notes: [...(r.notes ?? []), 'no captured body: reconstructed from the transcript'] } });
    }
    for (const { b, req } of extra.get(si) ?? []) items.push({ key: b.n, req });
    items.sort((a, b) => a.key - b.key);
    const requests = items.map((x, i) => ({ ...x.req, index: i + 1 }));
    return { ...s, requests, diagnostics: si === 0 ? [...s.diagnostics, ...diagnostics] : s.diagnostics };
  });
  for (const [id, s] of made) out.push({ ...s, requests: extra.get(id)!.map((x, i) => ({ ...x.req, index: i + 1 })) });
  return out;
}

/** Bodies in send order, taken from the front: a body taken elsewhere is skipped for good (taken only grows). */
class BodyQueue {
  private readonly list: CapturedRequest[] = [];
  private at = 0;
  push(b: CapturedRequest): void {
    this.list.push(b);
  }
  /** The first body not in `taken`, or undefined. */
  first(taken: Set<CapturedRequest>): CapturedRequest | undefined {
    while (this.at < this.list.length && taken.has(this.list[this.at])) this.at++;
    return this.list[this.at];
  }
}

/**
 * Pairs requests (send order, the sessions of one ref together) with captured bodies (send order)
 * by rules 1 and 2 of the module comment: for each request with a response id, the first body
 * not yet taken with that id; then for each request still without a body and with a chain, the
 * first body not yet taken of the same model whose prefix hash equals its chain's.
 * Indexed (response id → bodies, model → prefix hash → bodies), each body's chain built and hashed
 * once, only when some request comes to rule 2: time linear in requests + body bytes. A scan of
 * every body per request, each body chained and hashed again per candidate, was Θ(R·B) and
 * Θ(R·U·bytes) with U bodies left unmatched (a failed attempt, a compaction call); the result is
 * the same (test/unit/hosts/wire-match-indexed.test.ts).
 * @param chains filled with the chain built for each body hashed for rule 2 (null: no blocks),
 *   reused by the caller instead of building it again
 * @returns the body of each matched request (each body at most once)
 */
export function matchRequests(requests: LlmRequest[], bodies: CapturedRequest[], chains = new Map<CapturedRequest, BlockNode | null>()): Map<LlmRequest, CapturedRequest> {
  const bodyOf = new Map<LlmRequest, CapturedRequest>();
  const taken = new Set<CapturedRequest>();
  const byId = new Map<string, BodyQueue>();
  for (const b of bodies) {
    if (!b.responseId) continue;
    let q = byId.get(b.responseId);
    if (!q) byId.set(b.responseId, (q = new BodyQueue()));
    q.push(b);
  }
  for (const r of requests) {
    const b = r.responseId ? byId.get(r.responseId)?.first(taken) : undefined;
    if (b) {
      bodyOf.set(r, b);
      taken.add(b);
    }
  }
  let byHash: Map<string, Map<string, BodyQueue>> | null = null;
  for (const r of requests) {
    if (bodyOf.has(r) || !r.tail) continue;
    if (!byHash) {
      byHash = new Map();
      for (const b of bodies) {
        if (taken.has(b) || !b.wire) continue;
        const t = chainOf(b.wire.blocks);
        chains.set(b, t);
        if (!t) continue;
        let m = byHash.get(b.wire.model);
        if (!m) byHash.set(b.wire.model, (m = new Map()));
        let q = m.get(t.hashKey);
        if (!q) m.set(t.hashKey, (q = new BodyQueue()));
        q.push(b);
      }
    }
    const b = byHash.get(r.model)?.get(r.tail.hashKey)?.first(taken);
    if (b) {
      bodyOf.set(r, b);
      taken.add(b);
    }
  }
  return bodyOf;
}

/**
 * The request built from its body: exact bytes, the transcript's usage, ids, time and notes, and
 * what the reader knows of the head's blocks (`origin`: Claude Code's billing header derived from a
 * compaction summary), carried over to the body's block at the same path. Only the head (tools,
 * system) is walked: its blocks are the chain's first, so this costs the head's length per request.
 */
function fromBody(r: LlmRequest, b: CapturedRequest, built?: BlockNode | null): LlmRequest {
  if (!b.wire) return r;
  const origins = new Map<string, string>();
  for (let d = 1; r.tail && d <= r.tail.depth; d++) {
    const x = r.tail.at(d)!.block;
    if (x.segment === 'messages') break;
    if (x.origin) origins.set(`${x.segment}\u0000${x.path}`, x.origin);
  }
  if (origins.size) {
    for (const x of b.wire.blocks) {
      const o = x.segment !== 'messages' ? origins.get(`${x.segment}\u0000${x.path}`) : undefined;
      if (o) x.origin = o;
    }
  }
  const req: LlmRequest = {
    ...r,
    evidence: 'wire',
    tail: built !== undefined ? built : chainOf(b.wire.blocks),
    params: b.wire.params,
    notes: [`wire: ${basename(b.file)}`, ...(r.notes ?? []).filter((n) => !/computed, not recorded/.test(n))],
  };
  if (b.wire.cacheKey !== undefined) req.cacheKey = b.wire.cacheKey;
  return req;
}

function msOf(v: unknown): number | null {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : null;
}
