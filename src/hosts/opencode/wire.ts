/**
 * Wire mode for OpenCode: requests built from captured request bodies (exact bytes), matched to
 * the session's stored assistant messages.
 *
 * Input: a folder of `NNN-<kind>.body.json` (body bytes as sent; name order = send order) with
 * optional sibling `NNN-<kind>.meta.json` as scripts/record/opencode/fake-provider.mjs writes
 * them (`kind` agent | title | summary, `api`, `headers` with OpenCode's `x-session-id`, and the
 * provider's `usage`), or body files in send order from the capture proxy's folders (the capture
 * join, src/hosts/capturejoin.ts: `NNN-<api>` names, the proxy's meta with `api`, `sessionId` and
 * the redacted `headers`). Without a kind in the meta, the kind comes from OpenCode's system
 * prompts (title generator, context summarization agent); without a session id the body belongs
 * to the only session read.
 *
 * Matching (per session, by order within kind, reference/opencode.md §1.3: one request ↔ one
 * assistant message): the i-th agent body of a session ↔ its i-th reconstructed agent request,
 * skipping a body whose message count differs when the next body fits (a provider-level retry
 * sends the same body twice for one message), and a request whose message count differs when the
 * body fits the next request (its body was not captured: it stays reconstructed, with a note);
 * summaries likewise. Title bodies have no stored
 * message: they become requests of kind `title` with the usage of the capture meta.
 * The phux context of a V2 plugin lives in the system prompt, which OpenCode does not store: each
 * body's system text yields a `context` event with placement `head` (the stream analysis folds
 * identical re-sends); a compaction body's hook checkpoint yields one with placement `tail`.
 */
import { basename } from 'node:path';
import { blocksOf, chainOf } from '../../core/chain.js';
import type { Diagnostic, LlmRequest, Session, TranscriptEvent } from '../../core/model.js';
import { checkedWireBody, NotARequestBody, type WireApi, type WireRequest } from '../../core/wire.js';
import { usageFromResponse, wireOnlyRequest } from '../capture/index.js';
import { FILE_LIMITS, readRegularFile } from '../files.js';
import { readMetaObject } from '../meta.js';
import { findContextMessages, PHUX_COMPACTION_HOOK_PREFIX } from '../../phux/context.js';
import { plural } from '../../plural.js';
import { bodyFiles, noBodiesDiagnostic, sourceLabel, type RequestSource } from '../wirematch.js';
import type { Reconstruction } from './normalize.js';

/** One captured body. */
export interface OpenCodeBody {
  file: string;
  /** Request number from the file name, else the 1-based position. */
  n: number;
  kind: 'agent' | 'title' | 'summary';
  /** `heuristic` when `kind` comes from the body's text (OpenCode's title or summary prompt), not from the meta. */
  kindEvidence?: 'heuristic';
  api: WireApi;
  sessionId?: string;
  wire?: WireRequest & { api: WireApi };
  /** Items in the messages segment. */
  messages: number;
  /** Text of the system segment (for phux V2 detection). */
  systemText: string;
  /** Text of the user messages of a summary body (for the compaction hook checkpoint). */
  promptText: string;
  meta?: Record<string, unknown>;
}

const TITLE_MARK = 'You are a title generator';
const SUMMARY_MARK = 'context summarization agent';

/**
 * Reads captured bodies in send order (a folder: name order; a list: as given). Never throws for
 * bad content (diagnostics); throws only when a folder cannot be listed.
 */
export async function readOpenCodeBodies(src: RequestSource, diagnostics: Diagnostic[]): Promise<OpenCodeBody[]> {
  const out: OpenCodeBody[] = [];
  for (const { file, n } of await bodyFiles(src)) {
    let bytes: Uint8Array | undefined;
    try {
      bytes = new Uint8Array(await readRegularFile(file, FILE_LIMITS.body));
    } catch (e) {
      diagnostics.push({ file, line: 1, severity: 'error', message: `cannot read request body: ${e instanceof Error ? e.message : String(e)}` });
    }
    const meta = await readMetaObject(file.replace(/\.body\.json$/, '.meta.json'), diagnostics);
    const headers = (meta?.headers && typeof meta.headers === 'object' ? meta.headers : {}) as Record<string, unknown>;
    const sessionId = typeof headers['x-session-id'] === 'string' ? headers['x-session-id'] : meta?.sessionHeader === 'x-session-id' && typeof meta.sessionId === 'string' ? meta.sessionId : undefined;
    const body: OpenCodeBody = {
      file,
      n,
      kind: 'agent',
      api: 'openai-completions',
      sessionId: sessionId || undefined,
      messages: 0,
      systemText: '',
      promptText: '',
      meta,
    };
    if (bytes) {
      try {
        const metaApi = typeof meta?.api === 'string' ? (meta.api as WireApi) : undefined;
        const urlApi = typeof meta?.url === 'string' && /\/messages(\?|$)/.test(meta.url) ? 'anthropic-messages' : undefined;
        const checked = checkedWireBody(bytes, metaApi ?? urlApi);
        for (const message of checked.warnings) diagnostics.push({ file, line: 1, severity: 'warning', message });
        bytes = checked.bytes;
        body.wire = checked.wire;
        body.api = body.wire.api;
        const dec = new TextDecoder();
        const texts = (seg: string) => body.wire!.blocks.filter((b) => b.segment === seg).map((b) => textOf(JSON.parse(dec.decode(b.bytes)) as unknown));
        body.systemText = texts('system').join('\n');
        body.messages = new Set(body.wire.blocks.filter((b) => b.segment === 'messages').map((b) => b.item)).size;
        const metaKind = meta?.kind;
        const hasTools = body.wire.blocks.some((b) => b.segment === 'tools');
        body.kind =
          metaKind === 'agent' || metaKind === 'title' || metaKind === 'summary'
            ? metaKind
            : body.systemText.includes(TITLE_MARK)
              ? 'title'
              : !hasTools && body.systemText.includes(SUMMARY_MARK)
                ? 'summary'
                : 'agent';
        if (metaKind !== body.kind && body.kind !== 'agent') body.kindEvidence = 'heuristic';
        if (body.kind === 'summary') body.promptText = messageTexts(bytes).join('\n');
      } catch (e) {
        diagnostics.push({ file, line: 1, severity: 'error', message: e instanceof NotARequestBody ? `${e.message}; skipped` : `request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}` });
      }
    }
    out.push(body);
  }
  return out;
}

/**
 * Wire mode for sessions read together: their reconstructed requests replaced by the captured
 * bodies that are theirs (wire.ts applyWire). A body with OpenCode's `x-session-id` goes to that
 * session; one without goes to the only session when just one is read, else to none. A body's
 * problems go to its session, those of bodies of no session read here to the first session (once).
 * @param reportUnowned false when another read of the same store reports the problems of bodies
 *   no session owns (the CLI reads a database's sessions one by one): they are then left out
 * Never throws: a source that cannot be listed is an error diagnostic on every session (requests
 * stay reconstructed).
 */
export async function withWire(recons: Reconstruction[], src: RequestSource, reportUnowned = true): Promise<void> {
  const label = sourceLabel(src);
  const wireDiagnostics: Diagnostic[] = [];
  let bodies;
  try {
    bodies = await readOpenCodeBodies(src, wireDiagnostics);
  } catch (e) {
    const message = `cannot read captured request bodies: ${e instanceof Error ? e.message : String(e)}; requests reconstructed`;
    for (const r of recons) r.session.diagnostics.push({ file: label, line: 1, severity: 'error', message });
    return;
  }
  const none = noBodiesDiagnostic(src, bodies.length);
  if (none) {
    for (const r of recons) r.session.diagnostics.push(none);
    return;
  }
  const providers = new Map<string, string>();
  for (const r of recons) for (const q of r.session.requests) if (!providers.has(`${q.api}\u0000${q.model}`)) providers.set(`${q.api}\u0000${q.model}`, q.provider);
  const single = recons.length === 1;
  const bodyByFile = new Map(bodies.map((b) => [b.file, b] as const));
  const ids = new Set(recons.map((r) => r.session.id));
  // A body's problems go to its session; those of a body whose session is unknown (its meta is
  // unreadable) or not read here go to the first session, once.
  const ownerOf = (d: Diagnostic): string | null => {
    const b = bodyByFile.get(d.file.replace(/\.meta\.json$/, '.body.json'));
    if (!b) return null;
    if (b.sessionId && ids.has(b.sessionId)) return b.sessionId;
    return !b.sessionId && single && reportUnowned ? recons[0].session.id : null;
  };
  for (const [i, r] of recons.entries()) {
    // A problem of no session read here is reported once, on the first session (not once per session).
    r.session.diagnostics.push(...wireDiagnostics.filter((d) => {
      const owner = ownerOf(d);
      return owner === null ? i === 0 && reportUnowned : owner === r.session.id;
    }));
    applyWire(r, bodies, single, label, providers);
  }
  // Bodies that belong to none of these sessions (another data dir, another host) are not mixed in.
  const foreign = bodies.filter((b) => (b.sessionId ? !ids.has(b.sessionId) : !single));
  if (foreign.length === bodies.length && bodies.length && typeof src === 'string') {
    const message = `none of the ${plural(bodies.length, 'captured body')} in ${label} belongs to a session here; ignored (requests reconstructed from the database)`;
    for (const r of recons) r.session.diagnostics.push({ file: label, line: 0, severity: 'error', message });
  }
}

/** Text of a JSON block: strings and `text`/`content` members, in order. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(textOf).join('\n');
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.text === 'string') return o.text;
    if ('content' in o) return textOf(o.content);
  }
  return '';
}

function messageTexts(bytes: Uint8Array): string[] {
  try {
    const body = JSON.parse(new TextDecoder().decode(bytes)) as { messages?: Array<{ role?: string; content?: unknown }> };
    return (body.messages ?? []).filter((m) => m.role === 'user').map((m) => textOf(m.content));
  } catch {
    return [];
  }
}

/**
 * Replaces a session's reconstructed requests by wire requests built from its bodies.
 * @param bodies every body of the folder; those of other sessions are skipped
 * @param single true when only one session is read (bodies without a session id belong to it)
 */
export function applyWire(recon: Reconstruction, bodies: OpenCodeBody[], single: boolean, dir: string, providers: Map<string, string>): Session {
  const session = recon.session;
  const mine = bodies.filter((b) => (b.sessionId ? b.sessionId === session.id : single));
  if (mine.length === 0) return session;
  const diagnostics = session.diagnostics;
  const pos = new Map<OpenCodeBody, number>(); // body → index into recon.requests
  for (const kind of ['agent', 'summary'] as const) {
    const rs = recon.requests.map((r, i) => ({ r, i })).filter((x) => x.r.request.kind === kind);
    const bs = mine.filter((b) => b.kind === kind && b.wire);
    let j = 0;
    for (const [k, { r, i }] of rs.entries()) {
      if (j >= bs.length) break;
      // A retried attempt: skip a body whose message count differs when the next one fits.
      if (kind === 'agent' && bs[j].messages !== r.messages && bs[j + 1]?.messages === r.messages) j++;
      // A request whose body was not captured: the next body fits the next request, not this one.
      else if (bs[j].messages !== r.messages && rs[k + 1]?.r.messages === bs[j].messages) continue;
      pos.set(bs[j], i);
      j++;
    }
    if (bs.length !== rs.length) {
      diagnostics.push({
        file: dir,
        line: 1,
        severity: 'warning',
        message: `session ${session.id}: ${plural(bs.length, `captured ${kind} body`)} for ${plural(rs.length, `stored ${kind} request`)}; matched by order`,
      });
    }
  }
  // Nothing matched and no title body: the reconstruction stays as it is.
  if (!pos.size && !mine.some((b) => b.kind === 'title')) return session;
  const out: LlmRequest[] = [];
  // Stored requests without a body keep their reconstruction, after the previous matched body.
  const orphansAfter = new Map<number, LlmRequest[]>();
  let lastBody = -1;
  const bodyOf = new Map<number, OpenCodeBody>();
  for (const [b, i] of pos) bodyOf.set(i, b);
  const bodyIndex = new Map(mine.map((b, i) => [b, i] as const));
  recon.requests.forEach((r, i) => {
    const b = bodyOf.get(i);
    if (b) {
      lastBody = bodyIndex.get(b)!;
      return;
    }
    const list = orphansAfter.get(lastBody) ?? [];
    list.push({ ...r.request, notes: [...(r.request.notes ?? []), 'no captured body: reconstructed from the database'] });
    orphansAfter.set(lastBody, list);
  });
  out.push(...(orphansAfter.get(-1) ?? []));
  const events: TranscriptEvent[] = [];
  const firstUser = recon.requests[0]?.message.ordinal ?? 1;
  let line = firstUser > 1 ? firstUser - 1 : 1;
  mine.forEach((b, bi) => {
    const i = pos.get(b);
    const matched = i !== undefined ? recon.requests[i] : undefined;
    if (matched) line = matched.message.ordinal;
    const req = matched ? fromMatched(b, matched.request, matched.messages) : fromUnmatched(b, providers);
    if (req) out.push(req);
    for (const m of findContextMessages(b.systemText)) {
      events.push({ kind: 'context', text: m.text, line, placement: 'head', timeMs: req?.timeMs ?? null });
    }
    if (b.kind === 'summary') {
      for (const m of findContextMessages(b.promptText)) {
        // Kept with the hook's line before it, so the stream analysis knows it is the compactor's checkpoint.
        if (m.compactionHook) events.push({ kind: 'context', text: `${PHUX_COMPACTION_HOOK_PREFIX}\n${m.text}`, line, placement: 'tail', timeMs: req?.timeMs ?? null });
      }
    }
    out.push(...(orphansAfter.get(bi) ?? []));
  });
  out.forEach((r, i) => (r.index = i + 1));
  session.requests = out;
  if (events.length) session.events = mergeEvents(session.events, events);
  return session;
}

/** Stable merge by line: transcript events first at equal lines (the request follows its prompt). */
function mergeEvents(a: TranscriptEvent[], b: TranscriptEvent[]): TranscriptEvent[] {
  const all = [...a.map((e, i) => ({ e, k: 0, i })), ...b.map((e, i) => ({ e, k: 1, i }))];
  all.sort((x, y) => x.e.line - y.e.line || x.k - y.k || x.i - y.i);
  return all.map((x) => x.e);
}

/** Wire request for a body matched to a stored message; message origins carried over when the counts agree. */
function fromMatched(b: OpenCodeBody, r: LlmRequest, reconstructedMessages: number): LlmRequest {
  if (!b.wire) return { ...r, notes: [...(r.notes ?? []), `captured body ${basename(b.file)} is not JSON: reconstructed`] };
  if (reconstructedMessages === b.messages) {
    const origins = new Map<string, string>();
    for (const x of blocksOf(r.tail)) if (x.segment === 'messages' && x.origin) origins.set(`${x.item}\u0000${x.path.replace(/^\w+\[\d+\]/, '')}`, x.origin);
    for (const x of b.wire.blocks) {
      if (x.segment !== 'messages') continue;
      const o = origins.get(`${x.item}\u0000${x.path.replace(/^\w+\[\d+\]/, '')}`);
      if (o) x.origin = o;
    }
  }
  const req: LlmRequest = { ...r, api: b.api, evidence: 'wire', tail: chainOf(b.wire.blocks), params: b.wire.params, notes: [`wire: ${basename(b.file)}`] };
  if (b.wire.cacheKey !== undefined) req.cacheKey = b.wire.cacheKey;
  else delete req.cacheKey;
  return req;
}

/** A body with no stored message (title requests, unmatched bodies). `providers`: api + model → provider id seen in the store. */
function fromUnmatched(b: OpenCodeBody, providers: Map<string, string>): LlmRequest | null {
  if (!b.wire) return null;
  const rawUsage = b.meta?.usage as Record<string, unknown> | undefined;
  const notes = [`wire: ${basename(b.file)}`];
  notes.push(b.kind === 'title' ? 'title request: OpenCode stores only the resulting session title' : 'no stored message for this request (e.g. a provider-level retry)');
  if (rawUsage) notes.push('usage from the capture meta');
  const received = typeof b.meta?.receivedAt === 'string' ? Date.parse(b.meta.receivedAt) : NaN;
  const req = wireOnlyRequest(
    { file: b.file, api: b.api, wire: b.wire },
    {
      provider: providers.get(`${b.api}\u0000${b.wire.model}`) ?? '',
      kind: b.kind,
      ...(b.kindEvidence !== undefined ? { kindEvidence: b.kindEvidence } : {}),
      timeMs: Number.isFinite(received) ? received : null,
      usage: usageFromResponse(b.api, rawUsage),
      notes,
    },
  );
  req.wireOnly = true;
  return req;
}
