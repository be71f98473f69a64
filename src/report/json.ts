/**
 * The stable machine interface of `prefix-lens analyze --json` (version 1) — also the view model
 * the timeline renders. Documented in README.md ("JSON output").
 */
import { promptOf, type RequestAnalysis, type SessionAnalysis } from '../core/analyze.js';
import type { Cause } from '../core/classify.js';
import type { BreakSegment, Diagnostic, Evidence, RequestKind, Session, Usage } from '../core/model.js';
import { judgePersona, personaDrifts, type PersonaReport } from '../core/persona.js';
import type { SystemChange } from '../core/sections.js';
import { priceSystemDeltas, type PricedDeltas, type ShapeCost } from '../core/shapes.js';
import type { DeltaCauseKind, SectionDelta, SystemShape } from '../core/model.js';
import { defaultRules, type ProviderRules } from '../core/rules.js';
import type { PhuxSessionJson } from '../phux/stream.js';
import { hostMissReport, hostMissSummary, type HostMissReport, type HostMissSummary } from './hostmiss.js';
import { numberAt } from './numbers.js';
import { verdictReason } from './reason.js';

/** One request in the report. Tokens are tokens, money USD, `time` ISO 8601. */
export interface RequestReport {
  /** 1-based send order within the session (a position in this report: the wire adds side requests between the transcript's). */
  index: number;
  /**
   * The request's number, the same in every evidence mode (core/numbering.ts): `"9"` = the ninth
   * agent request, `"8.1"` = the first side request (summary, title) sent after agent request 8.
   * What the report's texts, the Timeline, Problems entries and `diff` call a request.
   */
  number: string;
  /** 1-based line of the transcript (0 for database rows; see `row`). */
  line: number;
  row?: string;
  file: string;
  responseId: string | null;
  provider: string;
  model: string;
  api: string;
  time: string | null;
  kind: RequestKind;
  evidence: Evidence;
  usage: Usage | null;
  prefixHash: string | null;
  segments: { tools: string | null; system: string | null; messages: string | null; head: string | null };
  verdict: string;
  causes: Cause[];
  /**
   * `excerptAt`: index (UTF-16 units) in `before` and `after` of the character holding the first
   * changed byte (the text before it is the same on both sides).
   */
  break: {
    segment: BreakSegment;
    blockIndex: number;
    path: string;
    byteOffset: number;
    before: string;
    after: string;
    excerptAt: number;
    /** A system-segment break: the section it falls in and what happened there (core/sections.ts); absent elsewhere. */
    section?: SectionJson;
  } | null;
  costUSD: number | null;
  /** Index of the request whose cache entry this one was compared with. */
  matched: number | null;
  /** `number` of the request `matched` points at (null when nothing was matched). */
  matchedNumber: string | null;
  gapMs: number | null;
  /** Lifetime of the matched entry (ms), from its breakpoint or the family rules (e.g. 300 000 = 5 min, 3 600 000 = 1 h); null when nothing was matched. */
  ttlMs: number | null;
  promptTokens: number | null;
  expectedRead: number | null;
  observedRead: number | null;
  lostTokens: number;
  sameAsPrevious: boolean;
  error: string | null;
  notes: string[];
  /** The verdict's reason in one sentence, with the numbers behind it (untrusted text inside). */
  reason: string;
  /**
   * Where each number comes from: `reported` = the provider's usage as the host recorded it,
   * `estimated` = Prefix Lens's estimate from bytes (tokenModel), null = unknown. `cost`: whose
   * prices (`host` = the transcript's own, `rules` = the bundled provider-rules.json).
   */
  sources: {
    promptTokens: 'reported' | 'estimated' | null;
    observedRead: 'reported' | null;
    expectedRead: 'estimated' | null;
    lostTokens: 'estimated';
    cost: 'override' | 'host' | 'rules' | null;
  };
  /** The request's segments in render order (only those present); see SegmentRow. */
  segmentTable: SegmentRow[];
  /**
   * Hosts that fold system messages (PI-Desktop): the shape this request was sent in (`collapsed` |
   * `mid-conversation`), whether that is known from the route (`known: false` = the collapsed
   * default), and where it was read.
   */
  systemShape?: { used: SystemShape; known: boolean; source: string };
  /** The system deltas this request first carries, with what they re-bill in each shape; see SystemDeltasJson. */
  systemDeltas?: SystemDeltasJson;
  /**
   * The host's own cache verdict, when its transcript records one (Claude Code's
   * `message.diagnostics.cache_miss_reason`), and whether ours agrees (report/hostmiss.ts).
   */
  hostMiss?: HostMissReport;
}

/**
 * A section of a system block a change falls in: `name` (null when the text shows none), `via`
 * (`named` = the host's own section, `heading` = markdown heading, `tag` = XML-like element, `key`
 * = the changed line's `name:` key), `within` (enclosing headings / elements, outermost first),
 * `change` (`appended` | `removed` | `edited`), `whole` (a whole section added or removed), and the
 * bytes removed / added (UTF-8 bytes of the block).
 */
export interface SectionJson {
  name: string | null;
  via: SystemChange['via'];
  within: string[];
  change: SystemChange['change'];
  whole: boolean;
  removedBytes: number;
  addedBytes: number;
}

/**
 * One shape's cost of a request's system deltas: re-billed tokens (estimated from bytes with the
 * session's token model, in the family's caching steps), their USD (null = prices unknown), and
 * where that shape's prefix breaks against the compared request (null = it only grows).
 */
export interface ShapeCostJson {
  rebilledTokens: number;
  costUSD: number | null;
  break: { segment: BreakSegment; blockIndex: number; path: string; byteOffset: number; section: SectionJson | null } | null;
}

/**
 * The system deltas a request first carries (`deltas`: transcript line and row id, the sections
 * changed with `added` | `replaced` | `removed`, tools added / removed, and the cause the transcript
 * shows: `delegation-settled`, `skill-activation`, `tool-activation`, `context-budget`,
 * `compaction-checkpoint`, or null), compared with request `comparedWith` in both shapes.
 * `savedTokens` / `savedUSD` = collapsed − mid-conversation: what keeping the delta in place (or
 * out of the prompt, ADR 0337) saves on this request.
 */
export interface SystemDeltasJson {
  comparedWith: number | null;
  /** `number` of request `comparedWith` (null with it). */
  comparedWithNumber: string | null;
  used: SystemShape;
  known: boolean;
  deltas: Array<{ line: number; id: string; sections: SectionDelta[]; toolsAdded: string[]; toolsRemoved: string[]; cause: { kind: DeltaCauseKind; detail: string } | null }>;
  collapsed: ShapeCostJson;
  midConversation: ShapeCostJson;
  savedTokens: number;
  savedUSD: number | null;
}

/**
 * One segment of a request: its blocks and bytes, the prefix hash at its end (12 hex), its
 * evidence (`opaque` = the head of a reconstructed request, one block the transcript does not
 * spell out) and how it compares with the matched entry: `same` hash, `extended` (the entry's
 * prefix continues into new blocks), `changed` (the break is in it), `after-break` (re-sent
 * after a break earlier in the render order, so not read), null when nothing was matched.
 */
export interface SegmentRow {
  segment: 'head' | 'tools' | 'system' | 'messages';
  blocks: number;
  bytes: number;
  hash: string | null;
  evidence: Evidence | 'opaque';
  status: 'same' | 'extended' | 'changed' | 'after-break' | null;
}

/**
 * Persona snapshot verdicts of a BotHarness session (ADR-0060 / ADR-0134), built by
 * core/persona.ts from what the reader found; the timeline draws a persona lane from `events`.
 * `snapshot`: state (`none` = NULL, `empty` = a real empty snapshot, `body`, `unknown`), SHA-256
 * (12 hex), time, bot. `events[]`: `request` (1-based index), `line`, `kind` (`taken` | `stable` |
 * `refreshed` | `drift` | `reowned` | `memory-inbox` | `memory-head`), `hash` of the section after
 * the event (null when none), `detail`, and for changes `offset` (UTF-8 bytes into the system prompt),
 * `before` / `after` (the changed bytes with context). `verdict`: the session's worst event.
 */
export type PersonaJson = PersonaReport;

/** A diagnostic as the report gives it (SessionReport.diagnostics, `analyze --watch --json`'s `diagnostic` event). */
export type DiagnosticReport = { file: string; line: number; message: string; severity: string };

/** A reader's diagnostic as the report gives it: file, line, message, severity. */
export function diagnosticReport(d: Diagnostic): DiagnosticReport {
  return { file: d.file, line: d.line, message: d.message, severity: d.severity };
}

/** One session in the report. `phux` is present when the session carries a phux context stream. */
export interface SessionReport {
  host: string;
  id: string;
  path: string;
  title: string | null;
  parentId: string | null;
  diagnostics: DiagnosticReport[];
  ignored: Record<string, number>;
  totals: SessionAnalysis['totals'];
  tokenModel: SessionAnalysis['tokenModel'];
  /** Distinct `provider/model` of the requests, in order of first use. */
  models: string[];
  /** Evidence of the requests: all `wire`, all `reconstructed`, `mixed`, or null without requests. */
  evidence: Evidence | 'mixed' | null;
  requests: RequestReport[];
  /**
   * The phux context stream; each message also has `request`: the 1-based index of the first
   * agent request that carried it (null when none did).
   */
  phux?: Omit<PhuxSessionJson, 'messages'> & { messages: Array<PhuxSessionJson['messages'][number] & { request: number | null }> };
  /**
   * Sessions whose host folds system messages (PI-Desktop): the shapes the requests were sent in,
   * whether any route's flag was unknown, the number of requests with system deltas, and the
   * re-billed tokens / USD summed over them in each shape (see SystemDeltasJson).
   */
  systemShapes?: {
    used: SystemShape[];
    unknownRoute: boolean;
    requestsWithDeltas: number;
    deltas: number;
    collapsed: { rebilledTokens: number; costUSD: number | null };
    midConversation: { rebilledTokens: number; costUSD: number | null };
    savedTokens: number;
  };
  /**
   * BotHarness sessions: the persona snapshot (hash, time, none/empty) and the persona events per
   * request (taken, stable, refreshed, drift, reowned, memory-inbox, memory-head). See core/persona.ts.
   */
  persona?: PersonaJson;
  /** Requests with the host's own cache verdict, and where it disagrees with ours (report/hostmiss.ts). */
  hostMiss?: HostMissSummary;
}

/** The whole report. */
export interface Report {
  version: 1;
  sessions: SessionReport[];
}

/**
 * True when sessionReport keeps the request entries requestReport builds as they are: the session
 * has no persona and no request a system shape (those add causes and deltas to entries afterwards).
 */
export function keepsRequestReports(session: Session, requests: readonly RequestAnalysis[]): boolean {
  return !session.persona && !requests.some((r) => r.request.systemShape);
}

/**
 * Builds the report entry of one analyzed session. `phux` is attached by the caller when present.
 * @param rules the provider rules the session was analyzed with (prices of the system-delta costs)
 * @param reuse reports of the first requests from an earlier report of the same analysis (the live
 *   tail: its earlier requests unchanged); kept as they are, only the others are built. Ignored for
 *   sessions whose session-level passes edit request reports (persona, system shapes).
 */
export function sessionReport(a: SessionAnalysis, rules: ProviderRules = defaultRules, reuse?: readonly RequestReport[]): SessionReport {
  const s = a.session;
  const out = baseReport(a, reuse && keepsRequestReports(s, a.requests) ? reuse : undefined);
  addSystemShapes(a, out, rules);
  if (s.persona) {
    const persona = judgePersona(s.persona);
    out.persona = persona;
    // A persona change outside a compaction is the cause of that request's head break.
    const drifts = personaDrifts(persona);
    for (const r of out.requests) {
      const e = drifts.get(r.index);
      if (e && !r.causes.some((c) => c.kind === 'persona-drift')) {
        r.causes.push({ kind: 'persona-drift', detail: e.detail, certainty: 'certain' });
        r.reason = verdictReason(r);
      }
    }
  }
  return out;
}

function baseReport(a: SessionAnalysis, reuse?: readonly RequestReport[]): SessionReport {
  const out = sessionHeader(a, modelsSoFar(a.requests));
  // Reused reports first (the live tail's earlier requests), then the others built.
  out.requests = (reuse ?? []).slice(0, a.requests.length).concat(a.requests.slice(reuse?.length ?? 0).map((r) => requestReport(a, r)));
  const host = hostMissSummary(out.requests);
  if (host) out.hostMiss = host;
  return out;
}

/**
 * The report entry of one judged request of `a` (the session's own sums, system deltas and persona
 * causes are added by sessionReport). Depends only on the request and the earlier request it was
 * matched with, so the live tail builds an appended request's entry alone (src/live/session.ts).
 */
export function requestReport(a: Pick<SessionAnalysis, 'requests'>, r: RequestAnalysis): RequestReport {
  const q = r.request;
  const out: RequestReport = {
    index: q.index,
    number: r.number,
    line: q.source.line,
    file: q.source.file,
    responseId: q.responseId ?? null,
    provider: q.provider,
    model: q.model,
    api: q.api,
    // Readers check times at their boundary (hosts/numbers.ts); a library caller's session may not have been.
    time: q.timeMs !== null && Number.isFinite(q.timeMs) && Math.abs(q.timeMs) <= 8.64e15 ? new Date(q.timeMs).toISOString() : null,
    kind: q.kind,
    evidence: q.evidence,
    usage: q.usage,
    prefixHash: r.prefixHash,
    segments: { tools: r.segments.tools, system: r.segments.system, messages: r.segments.messages, head: r.segments.head },
    verdict: r.verdict,
    causes: [...r.causes],
    break: r.break
      ? {
          segment: r.break.segment,
          blockIndex: r.break.blockIndex,
          path: r.break.path,
          byteOffset: r.break.byteOffset,
          before: r.break.before,
          after: r.break.after,
          excerptAt: r.break.excerptAt,
        }
      : null,
    costUSD: r.costUSD,
    matched: r.matched,
    matchedNumber: r.matchedNumber,
    gapMs: r.gapMs,
    ttlMs: r.ttlMs,
    promptTokens: r.promptTokens,
    expectedRead: r.expectedRead,
    observedRead: r.observedRead,
    lostTokens: r.lostTokens,
    sameAsPrevious: r.sameAsPrevious,
    error: q.error ?? null,
    notes: [...(q.notes ?? []), ...r.notes],
    reason: '',
    sources: {
      promptTokens: q.usage && promptOf(q.usage) !== null ? 'reported' : r.promptTokens !== null ? 'estimated' : null,
      observedRead: q.usage && q.usage.cacheRead !== null ? 'reported' : null,
      expectedRead: r.expectedRead !== null ? 'estimated' : null,
      lostTokens: 'estimated',
      cost: r.costUSD === null ? null : r.priceSource,
    },
    segmentTable: segmentTable(r, a.requests[(r.matched ?? 0) - 1]),
  };
  if (q.source.row) out.row = q.source.row;
  if (r.systemChange && out.break) out.break.section = sectionJson(r.systemChange);
  if (q.systemShape) out.systemShape = { used: q.systemShape.used, known: q.systemShape.known, source: q.systemShape.source };
  out.reason = verdictReason(out);
  const host = hostMissReport(q.hostMiss, out);
  if (host) out.hostMiss = host;
  return out;
}

function sectionJson(c: SystemChange): SectionJson {
  return { name: c.section, via: c.via, within: c.within, change: c.change, whole: c.wholeSection, removedBytes: c.removedBytes, addedBytes: c.addedBytes };
}

function shapeCostJson(c: ShapeCost): ShapeCostJson {
  const b = c.break;
  return {
    rebilledTokens: c.rebilledTokens,
    costUSD: c.costUSD,
    break: b ? { segment: b.segment, blockIndex: b.blockIndex, path: b.path, byteOffset: b.byteOffset, section: b.systemChange ? sectionJson(b.systemChange) : null } : null,
  };
}

/** Attaches each request's priced system deltas (core/shapes.ts) and the session's sums. */
function addSystemShapes(a: SessionAnalysis, out: SessionReport, rules: ProviderRules): void {
  const shaped = a.requests.filter((r) => r.request.systemShape);
  if (!shaped.length) return;
  const priced: PricedDeltas[] = priceSystemDeltas(a, rules);
  const sum = { collapsed: { rebilledTokens: 0, costUSD: null as number | null }, midConversation: { rebilledTokens: 0, costUSD: null as number | null } };
  let deltas = 0;
  for (const p of priced) {
    const r = out.requests[p.request - 1];
    const saved = p.collapsed.rebilledTokens - p.midConversation.rebilledTokens;
    r.systemDeltas = {
      comparedWith: p.comparedWith,
      comparedWithNumber: p.comparedWith !== null ? numberAt(out.requests, p.comparedWith) : null,
      used: p.used,
      known: p.known,
      deltas: p.deltas.map((d) => ({ line: d.line, id: d.id, sections: d.sections, toolsAdded: d.toolsAdded, toolsRemoved: d.toolsRemoved, cause: d.cause })),
      collapsed: shapeCostJson(p.collapsed),
      midConversation: shapeCostJson(p.midConversation),
      savedTokens: saved,
      savedUSD: p.collapsed.costUSD !== null && p.midConversation.costUSD !== null ? p.collapsed.costUSD - p.midConversation.costUSD : null,
    };
    deltas += p.deltas.length;
    // The break's system-changed cause also says what the transcript shows caused the section's delta.
    const name = r.break?.segment === 'system' ? r.break.section?.name : undefined;
    const cause = name ? p.deltas.find((d) => d.cause && d.sections.some((x) => x.name === name))?.cause : undefined;
    const changed = r.causes.find((c) => c.kind === 'system-changed');
    if (cause && changed) {
      r.causes = r.causes.map((c) => (c === changed ? { ...c, detail: `${c.detail} (${cause.kind}: ${cause.detail})` } : c));
      r.reason = verdictReason(r);
    }
    for (const k of ['collapsed', 'midConversation'] as const) {
      sum[k].rebilledTokens += p[k].rebilledTokens;
      if (p[k].costUSD !== null) sum[k].costUSD = (sum[k].costUSD ?? 0) + p[k].costUSD!;
    }
  }
  out.systemShapes = {
    used: [...new Set(shaped.map((r) => r.request.systemShape!.used))],
    unknownRoute: shaped.some((r) => !r.request.systemShape!.known),
    requestsWithDeltas: priced.length,
    deltas,
    collapsed: sum.collapsed,
    midConversation: sum.midConversation,
    savedTokens: sum.collapsed.rebilledTokens - sum.midConversation.rebilledTokens,
  };
}

/**
 * A session report's fields before its requests (keys in the report's order, `requests` empty):
 * the session's, the analysis's totals and token model, and `models`/`evidence` (modelsSoFar).
 * The persisted tail builds a continued session's header with it from its running sums.
 */
export function sessionHeader(a: Pick<SessionAnalysis, 'session' | 'totals' | 'tokenModel'>, m: ModelsSoFar): SessionReport {
  const s = a.session;
  return {
    host: s.host,
    id: s.id,
    path: s.path,
    title: s.title ?? null,
    parentId: s.parentId ?? null,
    diagnostics: s.diagnostics.map(diagnosticReport),
    ignored: s.ignored,
    totals: a.totals,
    tokenModel: a.tokenModel,
    models: [...m.models],
    evidence: m.evidence,
    requests: [],
  };
}

/**
 * What a session's `models` and `evidence` are made of, over its first requests: the distinct
 * [provider, model] pairs in order of first use, the `provider/model` names they give (two pairs
 * can spell one name: "a/b" + "c", "a" + "b/c"; listed once), the evidence of all of them
 * (`mixed` when they differ, null without requests) and how many requests were seen.
 */
export interface ModelsSoFar {
  pairs: Array<[provider: string, model: string]>;
  models: string[];
  evidence: SessionReport['evidence'];
  requests: number;
}

/**
 * ModelsSoFar over `rs` in order, continuing `from` (the first requests' own, e.g. a persisted
 * state's): continued over a session's requests in parts, it gives what it gives over all of them.
 */
export function modelsSoFar(rs: readonly Pick<RequestAnalysis, 'request'>[], from?: ModelsSoFar): ModelsSoFar {
  const out: ModelsSoFar = from
    ? { pairs: from.pairs.map(([p, m]) => [p, m]), models: [...from.models], evidence: from.evidence, requests: from.requests }
    : { pairs: [], models: [], evidence: null, requests: 0 };
  const seen = new Map<string, Set<string>>();
  for (const [p, m] of out.pairs) {
    let models = seen.get(p);
    if (!models) seen.set(p, (models = new Set()));
    models.add(m);
  }
  const names = new Set(out.models);
  for (const { request: q } of rs) {
    out.evidence = out.requests++ === 0 ? q.evidence : out.evidence === q.evidence ? out.evidence : 'mixed';
    let models = seen.get(q.provider);
    if (!models) seen.set(q.provider, (models = new Set()));
    if (models.has(q.model)) continue;
    models.add(q.model);
    out.pairs.push([q.provider, q.model]);
    // A string built only for a new pair.
    const name = `${q.provider}/${q.model}`;
    if (!names.has(name)) {
      names.add(name);
      out.models.push(name);
    }
  }
  return out;
}

const RENDER_ORDER = ['head', 'tools', 'system', 'messages'] as const;

/** The segment rows of a request, compared with its matched request (when any). */
function segmentTable(r: RequestAnalysis, matched: RequestAnalysis | undefined): SegmentRow[] {
  const rows: SegmentRow[] = [];
  const breakAt = r.break ? RENDER_ORDER.indexOf(r.break.segment as (typeof RENDER_ORDER)[number]) : -1;
  RENDER_ORDER.forEach((seg, i) => {
    const size = r.segmentSizes[seg];
    if (!size) return;
    const hash = r.segments[seg];
    let status: SegmentRow['status'] = null;
    if (matched && r.matched !== null) {
      if (breakAt >= 0 && i === breakAt) status = 'changed';
      else if (breakAt >= 0 && i > breakAt) status = 'after-break';
      else status = hash !== null && hash === matched.segments[seg] ? 'same' : 'extended';
    }
    rows.push({ segment: seg, blocks: size.blocks, bytes: size.bytes, hash, evidence: seg === 'head' ? 'opaque' : r.request.evidence, status });
  });
  return rows;
}
