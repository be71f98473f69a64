/**
 * Wire mode for Pi: requests built from captured request bodies (exact bytes), matched to the
 * session's assistant entries.
 *
 * Input: a folder of `NNN-<api>.body.json` files (the body bytes as sent; file-name order = send
 * order), each with an optional sibling `NNN-<api>.meta.json` and an optional `index.ndjson`, as
 * written by the fixture recorder (scripts/record/fake-provider.mjs; reference/pi.md §3).
 * Every body is a request (evidence `wire`, blocks from `parseWireBody`): summaries (compaction,
 * branch summary: Pi's summarization system prompt, no tools; reference/pi.md §2) and retried
 * HTTP errors included, although the session has no entry for them.
 *
 * Matching bodies to assistant entries, in this order:
 *  1. a response id named by the meta (`responseId`) or the index line equals the entry's;
 *  2. the recorder's fake ids embed the request number (`chatcmpl-fake-N`, `msg_fake_N`,
 *     `resp_fake_N`): body N, if it is an agent request of the same api;
 *  3. the rest by order: assistant entries are appended in send order, so an unmatched entry takes
 *     the first unmatched agent body of the same api and model between its matched neighbours,
 *     preferring one whose messages count equals the reconstructed count.
 * Matches 2 and 3 also need the body's first message to be the entry's (the reconstruction sends
 * the same bytes): bodies of another session on the same model (a common case with real model
 * ids) must not be taken for this one's.
 */
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { usageFromResponse, wireOnlyRequest } from '../capture/index.js';
import { FILE_LIMITS, fileErrorText, readRegularFile } from '../files.js';
import { splitLines } from '../linesplit.js';
import { readMetaObject } from '../meta.js';
import { bodyFiles, noBodiesDiagnostic, sourceLabel, type RequestSource } from '../wirematch.js';
import { depthMessage, parseBounded } from '../../core/depth.js';
import { blocksOf, chainOf } from '../../core/chain.js';
import type { Diagnostic, LlmRequest } from '../../core/model.js';
import { checkedWireBody, NotARequestBody, type WireApi, type WireRequest } from '../../core/wire.js';
import { plural } from '../../plural.js';
import type { PiEntryRec, PiRead } from './read.js';
import { isoMs, type Reconstruction } from './normalize.js';

const WIRE_APIS: ReadonlySet<string> = new Set<WireApi>(['anthropic-messages', 'openai-completions', 'openai-responses']);

/** Start of Pi's `SUMMARIZATION_SYSTEM_PROMPT` (coding-agent `compaction/utils`), used by compaction and branch summaries. */
const SUMMARY_SYSTEM_MARK = 'context summarization assistant';

/** One captured request body. */
export interface PiBody {
  /** Path of the `.body.json` file. */
  file: string;
  /** Request number from the file name (`NNN-…`), else the 1-based position. */
  n: number;
  api: WireApi;
  /** Parsed blocks, or undefined when the body is not valid JSON (a diagnostic says why). */
  wire?: WireRequest & { api: WireApi };
  /** `agent` (agent loop) or `summary` (summarization system prompt, no tools). */
  kind: 'agent' | 'summary';
  /** Items in the messages segment (system messages excluded). */
  messages: number;
  /** The sidecar meta object, if any. */
  meta?: Record<string, unknown>;
  /** Response id named by the meta or the index, if any. */
  responseId?: string;
}

/**
 * Reads the captured bodies of a folder in name order.
 * @returns bodies plus diagnostics for unreadable or non-JSON files (never throws for bad content;
 *          throws only when the folder cannot be listed)
 */
export async function readPiBodies(src: RequestSource, diagnostics: Diagnostic[]): Promise<PiBody[]> {
  const index = typeof src === 'string' ? await readIndex(src, diagnostics) : new Map<string, Record<string, unknown>>();
  const out: PiBody[] = [];
  for (const { file, name, n } of await bodyFiles(src)) {
    const m = /^(\d+)-(.+)\.body\.json$/.exec(name);
    const nameApi = m && WIRE_APIS.has(m[2]) ? (m[2] as WireApi) : undefined;
    let bytes: Uint8Array;
    try {
      bytes = await readRegularFile(file, FILE_LIMITS.body);
    } catch (e) {
      diagnostics.push({ file, line: 1, severity: 'error', message: `cannot read request body: ${e instanceof Error ? e.message : String(e)}` });
      continue;
    }
    const meta = await readMetaObject(file.replace(/\.body\.json$/, '.meta.json'), diagnostics);
    const indexLine = index.get(name) ?? index.get(String(n));
    const responseId = str(meta?.responseId) ?? str(indexLine?.responseId);
    const body: PiBody = { file, n, api: nameApi ?? 'openai-completions', kind: 'agent', messages: 0, meta, responseId };
    try {
      const checked = checkedWireBody(bytes, nameApi);
      for (const message of checked.warnings) diagnostics.push({ file, line: 1, severity: 'warning', message });
      bytes = checked.bytes;
      body.wire = checked.wire;
      body.api = body.wire.api;
      body.messages = new Set(body.wire.blocks.filter((b) => b.segment === 'messages').map((b) => b.item)).size;
      // A body with tools is never a summary: parse it a second time (as an object) only otherwise.
      const hasTools = body.wire.blocks.some((b) => b.segment === 'tools');
      body.kind = !hasTools && isSummaryBody(JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>) ? 'summary' : 'agent';
    } catch (e) {
      diagnostics.push({ file, line: 1, severity: 'error', message: e instanceof NotARequestBody ? `${e.message}; skipped` : `request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}` });
    }
    out.push(body);
  }
  return out;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** `index.ndjson`: one object per request, keyed by its `file` name and by `n`. */
async function readIndex(dir: string, diagnostics: Diagnostic[]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  const file = join(dir, 'index.ndjson');
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file, FILE_LIMITS.index);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') diagnostics.push({ file, line: 1, severity: 'warning', message: `index ignored: ${fileErrorText(e)}` });
    return out;
  }
  for (const { line: n, text: line } of splitLines(bytes)) {
    if (!line.trim()) continue;
    try {
      const { value, cut } = parseBounded(line);
      if (cut) diagnostics.push({ file, line: n, severity: 'warning', message: depthMessage(cut) });
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        diagnostics.push({ file, line: n, severity: 'warning', message: 'index line is not an object; ignored' });
        continue;
      }
      const o = value as Record<string, unknown>;
      if (typeof o.file === 'string') out.set(o.file, o);
      if (typeof o.n === 'number') out.set(String(o.n), o);
    } catch {
      diagnostics.push({ file, line: n, severity: 'warning', message: 'index line is not JSON; ignored' });
    }
  }
  return out;
}

/** A summarization request: Pi's summarization system prompt and no tools. */
export function isSummaryBody(body: Record<string, unknown>): boolean {
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length > 0) return false;
  let system = '';
  if (Array.isArray(body.system)) system = body.system.map((b) => String((b as { text?: unknown })?.text ?? '')).join('');
  else if (typeof body.system === 'string') system = body.system;
  const list = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : [];
  for (const m of list as Array<Record<string, unknown>>) {
    if (m?.role === 'system' || m?.role === 'developer') system += typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
  }
  if (typeof body.instructions === 'string') system += body.instructions;
  return system.includes(SUMMARY_SYSTEM_MARK);
}

/** The request number embedded in the recorder's fake response ids, or undefined. */
export function fakeResponseNumber(responseId: string | undefined): number | undefined {
  const m = responseId ? /^(?:chatcmpl-fake-|msg_fake_|resp_fake_)(\d+)$/.exec(responseId) : null;
  return m ? Number(m[1]) : undefined;
}

interface Assistant {
  rec: PiEntryRec;
  api: string;
  model: string;
  responseId?: string;
  /** Reconstructed messages count (for tie-breaks). */
  messages?: number;
  /** Bytes of the first messages-segment block of the reconstructed request, when it has one. */
  first?: Uint8Array;
}

/** Bytes of the first messages-segment block of a chain (walks from the start; the head is short). */
function firstMessageBytes(tail: LlmRequest['tail']): Uint8Array | undefined {
  for (let d = 1; tail && d <= tail.depth; d++) {
    const b = tail.at(d)!.block;
    if (b.segment === 'messages') return b.bytes;
  }
  return undefined;
}

/**
 * Matches assistant entries (file order) to bodies (send order).
 * @returns body position (index into `bodies`) per assistant entry; unmatched entries are absent
 */
export function matchBodies(bodies: PiBody[], assistants: Assistant[]): Map<PiEntryRec, number> {
  const taken = new Set<number>();
  const pos = new Map<PiEntryRec, number>();
  const sameStart = (i: number, a: Assistant) => {
    const b = bodies[i].wire?.blocks.find((x) => x.segment === 'messages')?.bytes;
    return !a.first || !b || Buffer.compare(a.first, b) === 0;
  };
  const agentOk = (i: number, a: Assistant) =>
    bodies[i].kind === 'agent' && bodies[i].wire !== undefined && bodies[i].api === a.api && !taken.has(i) && sameStart(i, a);
  // 1 + 2: anchors by response id.
  for (const a of assistants) {
    if (!a.responseId) continue;
    let i = bodies.findIndex((b, j) => b.responseId === a.responseId && !taken.has(j));
    if (i < 0) {
      const n = fakeResponseNumber(a.responseId);
      if (n !== undefined) i = bodies.findIndex((b, j) => b.n === n && agentOk(j, a) && b.wire?.model === a.model);
    }
    if (i >= 0) {
      taken.add(i);
      pos.set(a.rec, i);
    }
  }
  // 3: the rest by order, between matched neighbours.
  for (let k = 0; k < assistants.length; k++) {
    const a = assistants[k];
    if (pos.has(a.rec)) continue;
    let lo = -1;
    for (let j = k - 1; j >= 0; j--) {
      const p = pos.get(assistants[j].rec);
      if (p !== undefined) {
        lo = p;
        break;
      }
    }
    let hi = bodies.length;
    for (let j = k + 1; j < assistants.length; j++) {
      const p = pos.get(assistants[j].rec);
      if (p !== undefined) {
        hi = p;
        break;
      }
    }
    const candidates: number[] = [];
    for (let i = lo + 1; i < hi; i++) if (agentOk(i, a) && bodies[i].wire?.model === a.model) candidates.push(i);
    const pick = candidates.find((i) => a.messages !== undefined && bodies[i].messages === a.messages) ?? candidates[0];
    if (pick !== undefined) {
      taken.add(pick);
      pos.set(a.rec, pick);
    }
  }
  return pos;
}

/**
 * Builds the session's requests from captured bodies: one per body in send order (evidence
 * `wire`), carrying the matched assistant entry's source line, usage, prices, response id and
 * time; plus the reconstructed request of any assistant entry with no body (after its
 * predecessor's). Indexes are 1-based over the result.
 */
export async function wireRequests(read: PiRead, recon: Reconstruction, src: RequestSource, diagnostics: Diagnostic[]): Promise<LlmRequest[]> {
  const bodies = await readPiBodies(src, diagnostics);
  const dir = sourceLabel(src);
  const none = noBodiesDiagnostic(src, bodies.length);
  if (none) {
    diagnostics.push(none);
    return recon.requests;
  }
  const assistants: Assistant[] = [...recon.byEntry].map(([rec, r]) => ({
    rec,
    api: r.api,
    model: r.model,
    responseId: r.responseId,
    messages: recon.messageCounts.get(r),
    first: firstMessageBytes(r.tail),
  }));
  const pos = matchBodies(bodies, assistants);
  if (bodies.length && assistants.length && pos.size === 0) {
    // Bodies of another session (or another host): mixing them in would invent breaks.
    diagnostics.push({
      file: dir,
      line: 0,
      severity: 'error',
      message: `none of the ${plural(bodies.length, 'captured body')} matches an assistant entry of ${basename(read.file)}; ignored (reconstructed from the session instead)`,
    });
    return recon.requests;
  }
  const byBody = new Map<number, PiEntryRec>();
  for (const [rec, i] of pos) byBody.set(i, rec);

  // Provider per api+model, for bodies without an entry.
  const providers = new Map<string, string>();
  for (const r of recon.requests) if (!providers.has(`${r.api}\u0000${r.model}`)) providers.set(`${r.api}\u0000${r.model}`, r.provider);

  const out: LlmRequest[] = [];
  // Reconstructed requests for entries without a body, placed after the previous matched entry.
  const orphansAfter = new Map<number, LlmRequest[]>();
  let lastPos = -1;
  for (const a of assistants) {
    const p = pos.get(a.rec);
    if (p !== undefined) {
      lastPos = p;
      continue;
    }
    const r = recon.byEntry.get(a.rec)!;
    diagnostics.push({ file: read.file, line: a.rec.line, severity: 'warning', message: `assistant entry has no captured request body in ${dir}; its request is reconstructed` });
    const list = orphansAfter.get(lastPos) ?? [];
    list.push({ ...r, notes: [...(r.notes ?? []), 'no captured body: reconstructed from the session'] });
    orphansAfter.set(lastPos, list);
  }
  out.push(...(orphansAfter.get(-1) ?? []));
  bodies.forEach((b, i) => {
    const rec = byBody.get(i);
    const matched = rec ? recon.byEntry.get(rec) : undefined;
    const req = matched ? fromMatched(b, matched, recon.messageCounts.get(matched)) : fromUnmatched(b, providers);
    if (req) out.push(req);
    out.push(...(orphansAfter.get(i) ?? []));
  });
  out.forEach((r, i) => (r.index = i + 1));
  return out;
}

/**
 * Request of a body matched to an assistant entry. When the body has as many messages as the
 * reconstruction, each wire message block takes the reconstructed block's `origin`
 * (compaction summary, branch summary, phux context), which the bytes alone do not tell.
 */
function fromMatched(b: PiBody, r: LlmRequest, reconstructedMessages: number | undefined): LlmRequest {
  if (!b.wire) return { ...r, notes: [...(r.notes ?? []), `captured body ${basename(b.file)} is not JSON: reconstructed`] };
  if (reconstructedMessages === b.messages) {
    const origins = new Map<number, string>();
    for (const x of blocksOf(r.tail)) if (x.segment === 'messages' && x.origin) origins.set(x.item, x.origin);
    for (const x of b.wire.blocks) {
      const o = x.segment === 'messages' ? origins.get(x.item) : undefined;
      if (o) x.origin = o;
    }
  }
  const req: LlmRequest = {
    ...r,
    evidence: 'wire',
    tail: chainOf(b.wire.blocks),
    params: b.wire.params,
    notes: [`wire: ${basename(b.file)}`],
  };
  if (b.wire.cacheKey !== undefined) req.cacheKey = b.wire.cacheKey;
  else delete req.cacheKey;
  return req;
}

function fromUnmatched(b: PiBody, providers: Map<string, string>): LlmRequest | null {
  if (!b.wire) return null;
  const status = typeof b.meta?.status === 'number' ? b.meta.status : undefined;
  const rawUsage = b.meta?.usage ?? b.meta?.responseUsage;
  const notes = [`wire: ${basename(b.file)}`];
  notes.push(
    b.kind === 'summary'
      ? 'summary request (compaction or branch summary): Pi 0.73 records no session entry or usage for it'
      : 'no session entry for this request (e.g. a provider-level retry)',
  );
  if (rawUsage) notes.push('usage from the capture meta');
  const req = wireOnlyRequest(
    { file: b.file, api: b.api, wire: b.wire },
    {
      provider: providers.get(`${b.api}\u0000${b.wire.model}`) ?? '',
      kind: b.kind,
      // Known from the body's text (Pi's summarization prompt): the session records no entry for it.
      ...(b.kind === 'summary' ? { kindEvidence: 'heuristic' as const } : {}),
      timeMs: isoMs(str(b.meta?.receivedAt)),
      usage: status !== undefined && status >= 400 ? null : usageFromResponse(b.api, rawUsage),
      notes,
    },
  );
  req.wireOnly = true;
  if (b.responseId) req.responseId = b.responseId;
  if (status !== undefined && status >= 400) req.error = `HTTP ${status}`;
  return req;
}
