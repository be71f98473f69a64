/**
 * The persisted incremental tail (issue 9): a Pi session that grew by appended lines is analyzed
 * from the state saved at its last complete line, not from the start, by a new process.
 *
 * When a Pi session's result entry is written (results.ts, a cache miss), a continuation state is
 * saved beside it (`<entry>.tail`): the identity the session had (identity.ts: size, mtime,
 * SHA-256 of the first and last 64 KiB, code, rules), where the read stopped (byte offset, line,
 * the 4 KiB seam), the entry ids and the last entry, the Pi encoder's states after it (its chain
 * tails, hashes recomputed from the stored blocks), the judge's live cache entries per lineage
 * (CANDIDATES requests with their prefix chains) and written breakpoint entries, the token
 * model's kept ratios and points, and the session report's running sums. Bounded: the chains of
 * each lineage's recent requests plus small sums (and one id per entry).
 *
 * A later `analyze --json` whose output entry (output.ts) misses for a file that only grew (its
 * first and last 64 KiB up to the saved offset hash as the saved identity's head and tail, the
 * live reader's seam check too) restores the state, reads only the appended lines, judges only
 * the appended requests, and splices the session's `--json` block: the earlier requests' lines
 * are copied from the saved output entry as bytes, the header (sums, diagnostics, token model) and
 * the new requests are rendered. Byte-identical to a full run (test/unit/cache/tail.test.ts).
 *
 * Appended entries that need entries before the last one (a branch back to an older entry, an
 * encoding context not saved: a model switch, a compaction keeping earlier entries) continue with
 * the entry tree read again (PiLiveSession.restoreTree: parsed and validated, not encoded or
 * judged); a token model that only gains the base of a new lineage continues too
 * (SessionJudge.adoptTokenModel). Falls back to a full read (returns null) for anything else: a
 * file rewritten, truncated or replaced; a half-written last line; a state that is corrupt,
 * foreign, from another build, rules or format version (zod-checked, then its chains must hash
 * as saved); a token model that moves for earlier requests (sessions or lineages under
 * CALIBRATION_LIMIT ratios and points) and a rate the session had not shown (both change the
 * earlier requests' results, which the state does not hold); captured bodies (wire evidence).
 * The phux context stream continues (the state keeps the transcript events and the requests
 * that carried a message).
 *
 * The result cache continues the same way (continueReport): the earlier requests' report entries
 * come from the result entry saved with the state (results.ts analyzeRefCached).
 */
import { closeSync, mkdirSync, openSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { LEN_FIELD, trailerAt, trailerBytes, writeAllSync } from './trailer.js';
import {
  Calibration,
  judgeSession,
  SessionJudge,
  sumTotals,
  totalsOf,
  type CalibrationState,
  type JudgeState,
  type RequestAnalysis,
  type TotalSums,
} from '../core/analyze.js';
import type { BlockNode } from '../core/chain.js';
import type { Session } from '../core/model.js';
import { defaultRules, type ProviderRules } from '../core/rules.js';
import { ChainWriter, nodeAt, readChains, type StoredNode } from '../core/tailstate.js';
import { compactChains } from '../core/wire.js';
import { LineSplitter } from '../hosts/linesplit.js';
import { checkSessionNumbers, MAX_DIAGNOSTICS } from '../hosts/numbers.js';
import { NeedsFullRead, PiLiveSession, type PiTailState } from '../hosts/pi/live.js';
import { HeaderSchema } from '../hosts/pi/schema.js';
import type { SessionRef } from '../hosts/registry.js';
import { modelsSoFar, requestReport, sessionHeader, sessionReport, type RequestReport, type SessionReport } from '../report/json.js';
import { jsonText } from '../sanitize.js';
import { attachPhux, type CarrierCandidate } from '../report/phux.js';
import { contentCheck, entryFile, FORMAT, type Identity } from './identity.js';
import { cachedOutput, copyBlock, type CachedOutput } from './output.js';
import { releaseBetweenSessions } from '../memory.js';

export const TAIL_FORMAT = 'prefix-lens-tail';
/** Bumped whenever the state's layout or meaning changes. */
export const TAIL_VERSION = 6;

/** The report's running sums: what the session header needs of the requests judged so far. */
export interface ReportSums {
  sums: TotalSums;
  /** What `models` and `evidence` are made of so far (report/json.ts ModelsSoFar; its request count is `sums.requests`). */
  pairs: Array<[string, string]>;
  models: string[];
  evidence: SessionReport['evidence'];
}

/** A saved continuation state (see the module comment). */
export interface TailState {
  format: typeof TAIL_FORMAT;
  version: typeof TAIL_VERSION;
  /** The identity the session file had when this state was saved (its output entry's). */
  identity: Identity;
  pi: PiTailState;
  judge: JudgeState;
  calibration: CalibrationState;
  report: ReportSums;
  /** Chain table the encoder and judge states point into (core/tailstate.ts): the nodes' fields… */
  nodes: StoredNode[];
  /** …and their blocks' bytes, one after another (written as bytes, not in the JSON: see saveTail). */
  blob: Uint8Array;
  /** [node index, hex prefix hash] of every chain tail the states point at: checked after the rebuild. */
  check: Array<[number, string]>;
  /** The phux context stream's carriers so far: [request index, its line] of each request that first carried a context message. */
  carriers: Array<[number, number]>;
}

/** File of a ref's continuation state. */
export function tailFile(cacheDir: string, key: string): string {
  return entryFile(cacheDir, key).replace(/\.json$/, '.tail');
}

// ---------------------------------------------------------------------------------------------
// Validation (a state is untrusted input: a corrupt or foreign one is ignored)
// ---------------------------------------------------------------------------------------------

const num = z.number();
const int = z.number().int();
// `counted`: a reader's summary of the lines it only counted (hosts/numbers.ts LineProblems), kept so a continued read counts on.
const diagnostic = z.object({ file: z.string(), line: num, message: z.string(), severity: z.enum(['error', 'warning', 'info']), counted: z.object({ lines: int, last: num }).optional() });
const usage = z.object({ uncached: num.nullable(), cacheRead: num.nullable(), cacheWrite: num.nullable(), output: num.nullable() });
const storedRequest = z.looseObject({
  index: int,
  source: z.looseObject({ file: z.string(), line: num, row: z.string().optional() }),
  provider: z.string(),
  model: z.string(),
  api: z.string(),
  kind: z.enum(['agent', 'summary', 'title']),
  timeMs: num.nullable(),
  responseStartMs: num.optional(),
  responseEndMs: num.optional(),
  evidence: z.enum(['wire', 'reconstructed']),
  usage: usage.nullable(),
  params: z.record(z.string(), z.union([z.string(), num, z.boolean(), z.null()])),
  cacheKey: z.string().optional(),
  prices: z.object({ input: num, output: num, cacheRead: num, cacheWrite: num }).optional(),
  error: z.string().optional(),
  notes: z.array(z.string()).optional(),
});
const hash12 = z.string().nullable();
const ctx = z.object({ api: z.string(), provider: z.string(), model: z.string() });
const rates = z.object({ input: num.optional(), output: num.optional(), cacheRead: num.optional(), cacheWrite: num.optional() });

const TailSchema = z.object({
  format: z.literal(TAIL_FORMAT),
  version: z.literal(TAIL_VERSION),
  identity: z.looseObject({ format: z.literal(FORMAT) }),
  pi: z.object({
    offset: int,
    lastLine: int,
    lines: int,
    headHash: z.string(),
    seam: z.string(),
    header: HeaderSchema,
    idHashes: z.string(),
    entries: int.min(1),
    tip: z.object({ line: int, order: int, id: z.string(), parentId: z.string().nullable(), type: z.string(), timestamp: z.string().optional(), thinkingLevel: z.string(), model: z.string().nullable() }),
    process: z.object({ level: z.string(), model: z.string().nullable(), carried: z.boolean(), navigated: z.boolean() }),
    encoder: z.array(
      z.object({
        ctx,
        node: int,
        items: int,
        msgIndex: int,
        pending: z.array(z.looseObject({ role: z.literal('toolResult'), toolCallId: z.string(), content: z.array(z.unknown()) })),
        calls: z.array(z.object({ id: z.string(), name: z.string() })),
        seen: z.array(z.string()),
        idMap: z.array(z.tuple([z.string(), z.string()])).nullable(),
        last: z.object({ obj: z.record(z.string(), z.unknown()), item: int, role: z.string(), origin: z.string().optional(), before: int }).nullable(),
      }),
    ),
    builder: z.object({ count: int, taken: int, rates: z.array(z.tuple([z.string(), rates])) }),
    diagnostics: z.object({ lines: z.array(diagnostic), head: z.array(diagnostic), entries: z.array(diagnostic), links: z.array(diagnostic) }),
    ignored: z.record(z.string(), int),
    title: z.string().nullable(),
    events: z.array(
      z.union([
        z.object({ kind: z.literal('context'), text: z.string(), line: int, placement: z.enum(['tail', 'head']), timeMs: num.nullable() }),
        z.object({ kind: z.enum(['compaction', 'branch']), line: int, timeMs: num.nullable() }),
      ]),
    ),
  }),
  judge: z.object({
    count: int,
    numbering: z.object({ agents: int, sides: int }),
    lastAgent: z.object({ provider: z.string(), model: z.string() }).nullable(),
    latest: num.nullable(),
    lineages: z.array(
      z.object({
        key: z.string(),
        family: z.string(),
        minimum: num,
        recent: z.array(
          z.object({
            req: storedRequest,
            number: z.string(),
            tail: int,
            lastUse: num.nullable(),
            ttlMs: num,
            written: z.string().optional(),
            writtenDepth: int.optional(),
            segments: z.object({ head: hash12, tools: hash12, system: hash12, messages: hash12 }),
          }),
        ),
        written: z.array(z.tuple([z.string(), num.nullable(), num, num])),
        model: z.string(),
        api: z.string(),
      }),
    ),
  }),
  calibration: z.object({ limit: int, slopes: z.array(num), lineages: z.array(z.object({ key: z.string(), last: z.tuple([num, num]), pts: z.array(z.tuple([num, num])) })) }),
  report: z.object({
    sums: z.object({ requests: int, breaks: int, cacheRead: num, cacheWrite: num, uncached: num, output: num, lostTokens: num, costUSD: num, prompt: num, promptRead: num }),
    pairs: z.array(z.tuple([z.string(), z.string()])),
    models: z.array(z.string()),
    evidence: z.enum(['wire', 'reconstructed', 'mixed']).nullable(),
  }),
  nodes: z.array(
    z.object({
      p: int,
      b: z.object({
        segment: z.enum(['head', 'tools', 'system', 'messages']),
        item: int,
        path: z.string(),
        startPath: z.string().optional(),
        role: z.string().optional(),
        origin: z.string().optional(),
        breakpoint: z.object({ ttlSeconds: num }).optional(),
        n: int.min(0).optional(),
        raw: z.literal(true).optional(),
        text: z.string().optional(),
      }),
    }),
  ),
  check: z.array(z.tuple([int, z.string()])),
  carriers: z.array(z.tuple([int, int])),
});

/**
 * A state as the bytes of its file: the chain blocks' bytes, then the rest as the trailer
 * (trailer.ts: `<blob><JSON of the rest>\n<JSON length>\n`, as an output entry). The blocks' bytes
 * (most of a state) are written as they are, not as JSON strings: no text to decode, escape and
 * encode when saving, nor to unescape and encode when loading (the JSON holds the other fields;
 * its `nodes` say how many of the blob's bytes each block has).
 */
export function serializeTail(state: TailState): Buffer[] {
  const { blob, ...rest } = state;
  return [Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength), trailerBytes(JSON.stringify(rest))];
}

/**
 * Parses and checks a state's file bytes (serializeTail); null when they are not a state of this
 * format and version (cut short, corrupt, foreign, an earlier layout). The blob is a view into
 * `data`.
 */
export function parseTail(data: Uint8Array): TailState | null {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const at = buf.length >= LEN_FIELD ? trailerAt(buf.subarray(buf.length - LEN_FIELD), buf.length) : null;
  if (!at || buf[at.start + at.len - 1] !== 0x0a) return null;
  const { start, len } = at;
  let raw: unknown;
  try {
    raw = JSON.parse(buf.toString('utf8', start, start + len));
  } catch {
    return null;
  }
  const r = TailSchema.safeParse(raw);
  if (!r.success) return null;
  // The blocks' bytes are the blob exactly (readChains checks each block's share).
  let total = 0;
  for (const n of r.data.nodes) total += n.b.n ?? 0;
  if (total !== start) return null;
  return { ...(r.data as unknown as Omit<TailState, 'blob'>), blob: buf.subarray(0, start) };
}

/** The state saved for a ref, or null (missing, corrupt, foreign, another version). Never throws. */
export async function loadTail(cacheDir: string, key: string): Promise<TailState | null> {
  try {
    return parseTail(await readFile(tailFile(cacheDir, key)));
  } catch {
    return null;
  }
}

/**
 * Writes a state (serializeTail; a temporary file renamed into place), synchronously: a few
 * hundred KB to a few MB into the page cache, no thread-pool round trips for the main thread to
 * wait on. Write errors only cost the continuation.
 */
export async function saveTail(cacheDir: string, key: string, state: TailState): Promise<void> {
  const file = tailFile(cacheDir, key);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const fd = openSync(tmp, 'w');
    try {
      for (const part of serializeTail(state)) writeAllSync(fd, part);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // not written
    }
  }
}


/** Removes a ref's state (a run that could not continue from it and saved none). */
export async function dropTail(cacheDir: string, key: string): Promise<void> {
  await unlink(tailFile(cacheDir, key)).catch(() => {});
}

// ---------------------------------------------------------------------------------------------
// Saving: a full analysis that keeps what continuing needs
// ---------------------------------------------------------------------------------------------

/** Options of the stateful analysis and the continuation (tests use a small calibration limit). */
export interface TailOptions {
  rules?: ProviderRules;
  /** As analyzeSession's (core/analyze.ts CALIBRATION_LIMIT by default). */
  calibrationLimit?: number;
}

/** A state without the identity it is saved under. */
export type TailBody = Omit<TailState, 'identity'>;

/** Session report's sums of judged requests (from the sums of earlier ones). */
function reportSums(rs: readonly RequestAnalysis[], from?: ReportSums): ReportSums {
  const m = modelsSoFar(rs, from && { pairs: from.pairs, models: from.models, evidence: from.evidence, requests: from.sums.requests });
  return { sums: sumTotals(rs, from?.sums), pairs: m.pairs, models: m.models, evidence: m.evidence };
}

/** True when nothing in a report is computed over the whole session beyond what the state keeps (the phux stream: its events and carriers are kept). */
function continuable(r: SessionReport): boolean {
  return r.hostMiss === undefined && r.systemShapes === undefined && r.persona === undefined && r.requests.every((q) => q.hostMiss === undefined && q.systemShape === undefined);
}

/**
 * [index, line] of each request the report's phux stream names as a message's carrier (distinct,
 * ascending). Enough to find the carrier of every earlier message again: for a message whose
 * carrier is c, no request between it and c exists (c is the first after its line), so among
 * carriers and later requests c is still the first after it. Null when a line is unknown.
 */
function carriersOf(report: SessionReport, lineOf: (index: number) => number | undefined): Array<[number, number]> | null {
  const out = new Map<number, number>();
  for (const m of report.phux?.messages ?? []) {
    if (m.request === null || out.has(m.request)) continue;
    const line = lineOf(m.request);
    if (line === undefined) return null;
    out.set(m.request, line);
  }
  return [...out].sort((a, b) => a[0] - b[0]);
}

/** The state after an analysis (null without the Pi read's part: the session cannot be continued). */
function bodyOf(pi: PiTailState | null, judge: SessionJudge, calibration: Calibration, report: ReportSums, writer: ChainWriter, carriers: Array<[number, number]>): TailBody | null {
  if (!pi) return null;
  const state = judge.exportState((n) => writer.ref(n));
  // Every chain tail the states point at (the judge's live entries, the encoder's states and their last messages).
  const check = writer.tails;
  const { nodes, blob } = writer.table();
  return { format: TAIL_FORMAT, version: TAIL_VERSION, pi, judge: state, calibration: calibration.exportState(), report, nodes, blob, check, carriers };
}

/**
 * Reads and analyzes a Pi session as a full read does (hosts/pi readPiSession + openRef's number
 * checks + analyzeSession + the report), keeping what a continuation needs.
 * @returns the report entries, and the state (without identity) or null when this session cannot
 *   be continued (see the module comment); null reports when the read is not the full read's (a
 *   half-written last line, an unreadable file): the caller reads it the plain way
 */
export async function analyzePiWithState(ref: SessionRef, opts: TailOptions = {}): Promise<{ reports: SessionReport[]; state: TailBody | null } | null> {
  const rules = opts.rules ?? defaultRules;
  let live: PiLiveSession | null = await PiLiveSession.open(ref.path, { once: true });
  let size: number;
  try {
    const fh = await open(ref.path, 'r');
    try {
      size = (await fh.stat()).size;
    } finally {
      await fh.close();
    }
  } catch {
    return null;
  }
  // The live reader waits for a last line's newline; a full read takes it: not the same read.
  if (live.consumed !== size || live.pendingLine) return null;
  const session: Session = live.session();
  const requests = session.requests;
  const writer = new ChainWriter();
  const last = requests[requests.length - 1];
  // The encoder's states after the last entry, for the encoding of the last request (the next one's likely).
  let pi = live.exportState(last ? [{ api: last.api, provider: last.provider, model: last.model }] : [], (n) => writer.ref(n));
  live = null;
  // As readPiSession: long blocks kept as bytes, the entry tree released.
  compactChains(requests.map((r) => r.tail));
  const readDiagnostics = session.diagnostics.length;
  checkSessionNumbers(session);
  if (session.diagnostics.length !== readDiagnostics) pi = null;
  releaseBetweenSessions();
  const { analysis: a, calibration, judge } = judgeSession(session, rules, { calibrationLimit: opts.calibrationLimit });
  // As openRef's reader + analyzeRefUncached: the phux context stream attached.
  const report = attachPhux(sessionReport(a, rules), session);
  if (!continuable(report)) pi = null;
  const carriers = carriersOf(report, (i) => requests[i - 1]?.source.line);
  return { reports: [report], state: carriers ? bodyOf(pi, judge, calibration, reportSums(judge.requests), writer, carriers) : null };
}

// ---------------------------------------------------------------------------------------------
// Continuing
// ---------------------------------------------------------------------------------------------

/**
 * True when the file at `path` starts with the bytes the state's identity describes: at least
 * `size` bytes, whose first and last min(size, 64 KiB) hash as the identity's head and tail
 * (identity.ts contentCheck over the first `size` bytes). `now` (the file's identity now) gives
 * the head's hash when the old size covers the whole first 64 KiB (then not read again).
 */
export async function grownFrom(path: string, id: Identity, now?: Identity): Promise<boolean> {
  if (id.size === null || id.head === null || id.tail === null) return false;
  try {
    if (statSync(path).size < id.size) return false;
  } catch {
    return false;
  }
  const check = await contentCheck(path, id.size, now?.head ?? undefined);
  return check !== null && check.head === id.head && check.tail === id.tail;
}

/** Sessions this thread continued from a saved state (tests of the CLI, which runs in process there). */
export let continuedRuns = 0;
/** Of those, the continuations that read the entry tree again (a branch, a model switch or a compaction appended). */
export let treeRuns = 0;

/** Why the last continuePi call of this thread returned null (for tests and the benchmark's log). */
export let lastMiss = '';

function miss(why: string): null {
  lastMiss = why;
  return null;
}

/** What a continuation produced. */
export interface Continued {
  /** The session's `--json` block (output.ts layout) as UTF-8 chunks of whole lines. */
  chunks: Uint8Array[];
  requests: number;
  /** The new state (without identity), null when the grown session cannot be continued again. */
  state: TailBody | null;
  /** Requests judged by this continuation (the appended ones). */
  appended: number;
  /** Nothing readable: no requests and an error diagnostic (the CLI's exit code). */
  unreadable: boolean;
}

/**
 * The requests' part of a saved `--json` block (as chunks: the block is not copied into one
 * buffer): the bytes between its `"requests": [` line and the closing `]` line (each request
 * object indented by 8, the last without its comma), or nothing for a session without requests.
 * @throws Error when the block is not laid out so
 */
function requestSection(block: Buffer[], requests: number): Buffer[] {
  const open = Buffer.from('\n      "requests": [\n');
  if (requests === 0) {
    const head = block[0] ?? Buffer.alloc(0);
    if (!/\n {6}"requests": \[\],?\n/.test(head.toString('latin1', 0, Math.min(head.length, 1 << 20)))) throw new Error('saved block has requests');
    return [];
  }
  const at = indexIn(block, open, false);
  // The requests' closing line is the last line of the block indented by 6 that starts with `]`:
  // what follows (the phux stream) is a key at 6 with its content deeper and `}` to close it.
  const end = indexIn(block, Buffer.from('\n      ]'), true);
  const after = sliceOf(block, end + 8, end + 9)[0]?.[0];
  if (at < 0 || end < at + open.length || (after !== 0x0a && after !== 0x2c)) throw new Error('saved block is not laid out as expected');
  return sliceOf(block, at + open.length, end);
}

/**
 * First (or, `last`, the last) offset of `needle` in the bytes of `chunks` one after another, -1
 * when absent. Copies only each chunk's edge beside its neighbour (a match may span two chunks).
 */
function indexIn(chunks: Buffer[], needle: Buffer, last: boolean): number {
  const edge = needle.length - 1;
  const starts: number[] = [];
  let total = 0;
  for (const c of chunks) {
    starts.push(total);
    total += c.length;
  }
  for (let k = last ? chunks.length - 1 : 0; k >= 0 && k < chunks.length; k += last ? -1 : 1) {
    const c = chunks[k];
    const i = last ? c.lastIndexOf(needle) : c.indexOf(needle);
    // A match ending in the next chunk: searched in this chunk's tail joined with that chunk's head.
    const next = chunks[k + 1];
    const span = next && edge > 0 ? Buffer.concat([c.subarray(Math.max(0, c.length - edge)), next.subarray(0, edge)]) : null;
    const j = span ? span.indexOf(needle) : -1;
    const spanAt = j >= 0 ? starts[k] + Math.max(0, c.length - edge) + j : -1;
    const inChunk = i >= 0 ? starts[k] + i : -1;
    if (last ? spanAt >= 0 || inChunk >= 0 : inChunk >= 0 || spanAt >= 0) return last ? Math.max(spanAt, inChunk) : inChunk >= 0 ? inChunk : spanAt;
  }
  return -1;
}

/** Bytes [start, end) of `chunks` one after another, as subarrays of them (no copy). */
function sliceOf(chunks: Buffer[], start: number, end: number): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (const c of chunks) {
    const a = Math.max(start, at);
    const b = Math.min(end, at + c.length);
    if (a < b) out.push(c.subarray(a - at, b - at));
    at += c.length;
  }
  return out;
}

/** Block `index` of an output entry, as the chunks copyBlock reads (each a buffer of its own). */
async function readBlock(out: CachedOutput, index: number): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  await copyBlock(out, index, () => {}, (b) => void chunks.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength)));
  return chunks;
}

/** The request objects' first line in a session's `--json` block, and the line that closes them (with or without its comma). */
const REQUESTS_OPEN = '      "requests": [';
const REQUEST_END = /^ {8}\},?$/;
const REQUESTS_CLOSE = /^ {6}\](,?)$/;

/**
 * The session report block `index` of an output entry holds (the block JsonReportWriter wrote:
 * the session's lines without its closing one), parsed request by request, so no string holds more
 * than one request: JSON.parse of the pretty-printed text gives the values the report had (the
 * CLI's line escapes, sanitize.ts jsonText, are JSON escapes of the same characters).
 * @returns null when the block is not laid out so or does not hold `requests` requests
 */
export async function blockReport(out: CachedOutput, index: number, requests: number): Promise<SessionReport | null> {
  const head: string[] = [];
  const list: unknown[] = [];
  let cur: string[] = [];
  let phase = 'head' as 'head' | 'requests' | 'rest';
  try {
    const splitter = new LineSplitter();
    await copyBlock(out, index, () => {}, (bytes) => {
      for (const { text: line } of splitter.push(bytes)) {
        if (phase === 'requests') {
          const close = REQUESTS_CLOSE.exec(line);
          if (close && !cur.length) {
            head.push(`      "requests": []${close[1]}`);
            phase = 'rest';
            continue;
          }
          cur.push(line);
          if (REQUEST_END.test(line)) {
            const t = cur.join('\n');
            list.push(JSON.parse(t.endsWith(',') ? t.slice(0, -1) : t));
            cur = [];
          }
        } else if (phase === 'head' && line === REQUESTS_OPEN) phase = 'requests';
        else head.push(line);
      }
    });
    if ((phase as string) === 'requests' || list.length !== requests) return null;
    const report = JSON.parse(`${head.join('\n')}\n    }`) as SessionReport;
    if (!Array.isArray(report.requests) || report.requests.length !== 0) return null;
    report.requests = list as RequestReport[];
    return report;
  } catch {
    return null;
  }
}

/** Lines of a session's `--json` block as JsonReportWriter writes them (pipeline.ts sessionJsonLines, here to avoid a cycle). */
type LinesOf = (s: SessionReport, pad: string) => Iterable<string>;

/** What continuing a state gave, before it is rendered (continueCore). */
interface Core {
  /** The session report's header (sessionReport's keys and order; `requests` empty). */
  head: SessionReport;
  /** Entries of the appended requests. */
  fresh: RequestReport[];
  /** Requests judged before (the saved block's). */
  count: number;
  next: TailBody | null;
  appended: number;
  unreadable: boolean;
}

/**
 * Continues a Pi session from its saved state: reads only the lines appended after the state's
 * offset and judges only the appended requests. Null when the state does not apply or the session
 * cannot be continued (a full read then; `lastMiss` says why).
 * @param now the file's identity now (the new entries')
 */
async function continueCore(ref: SessionRef, state: TailState, now: Identity, opts: TailOptions): Promise<Core | null> {
  const old = state.identity;
  // Same build, rules, key and host; no captured bodies; the file grew from the saved bytes.
  const fixed: Array<keyof Identity> = ['format', 'version', 'code', 'rules', 'key', 'host', 'stamp'];
  if (!fixed.every((f) => old[f] === now[f]) || old.captures !== null || now.captures !== null || ref.host !== 'pi') return miss('another build, rules, ref or captured bodies');
  if (old.size !== state.pi.offset || now.size === null || now.size < old.size) return miss('shorter than the saved offset');
  if ((opts.calibrationLimit ?? state.calibration.limit) !== state.calibration.limit) return miss('another calibration limit');
  if (!(await grownFrom(ref.path, old, now))) return miss('not grown from the saved bytes (rewritten, truncated, replaced)');
  let nodes: BlockNode[];
  try {
    nodes = readChains(state);
    for (const [i, hex] of state.check) if (nodeAt(nodes, i)?.hashHex !== hex) return miss('a saved chain does not hash as saved');
  } catch (e) {
    return miss(e instanceof Error ? e.message : String(e));
  }
  const nodeOf = (i: number) => nodeAt(nodes, i);
  // From the last entry alone; when the appended lines need earlier entries (a branch, a model
  // switch, a compaction), with the entry tree read again (nothing before them encoded or judged).
  const tip = await continueWith(ref, state, now, opts, nodeOf, false);
  if (tip !== NEEDS_TREE) return tip;
  const c = await continueWith(ref, state, now, opts, nodeOf, true);
  if (c && c !== NEEDS_TREE) treeRuns++;
  return c === NEEDS_TREE ? miss('the entry tree read again did not hold an entry') : c;
}

/** continueWith's answer when the state's last entry is not enough (PiLiveSession NeedsFullRead). */
const NEEDS_TREE = Symbol('needs the entry tree');

/** continueCore from a restored reader: `tree` reads the entry tree again (PiLiveSession.restoreTree). */
async function continueWith(ref: SessionRef, state: TailState, now: Identity, opts: TailOptions, nodeOf: (i: number) => BlockNode | null, tree: boolean): Promise<Core | null | typeof NEEDS_TREE> {
  const rules = opts.rules ?? defaultRules;
  try {
    // grownFrom checked the first and last 64 KiB up to the saved offset: the reader's own head and seam check.
    const live = tree ? await PiLiveSession.restoreTree(ref.path, state.pi, nodeOf, { checked: true }) : PiLiveSession.restore(ref.path, state.pi, nodeOf, { checked: true });
    const change = await live.update();
    if (change === 'reset' || live.pendingLine || live.consumed !== now.size) return miss('the reader could not continue (rewritten, or a last line without its newline)');
    const session = live.session();
    const count = state.judge.count;
    if (live.kept !== count || session.requests.length < count) return miss('earlier requests rebuilt (a new rate)');
    const appended = session.requests.slice(count);
    // openRef's number checks, on what is new (a problem there adds diagnostics among the earlier ones': not continued).
    const probe: Session = { ...session, requests: appended, diagnostics: [] };
    checkSessionNumbers(probe);
    if (probe.diagnostics.length || session.diagnostics.length > MAX_DIAGNOSTICS) return miss('number problems or folded diagnostics');
    const calibration = Calibration.restore(state.calibration);
    const judge = SessionJudge.restore(calibration.model(), rules, state.judge, nodeOf);
    let moved = false;
    for (const r of appended) if (calibration.add(r)) moved = true;
    if (moved && !judge.adoptTokenModel(calibration.model())) return miss('the token model moved');
    for (const r of appended) judge.push(r);
    const fresh = judge.requests.slice(count).map((r) => requestReport({ requests: judge.requests }, r));
    if (fresh.some((r) => r.hostMiss !== undefined || r.systemShape !== undefined)) return miss('host verdicts or system shapes');
    const sums = reportSums(judge.requests.slice(count), state.report);
    // The header as sessionReport builds it (report/json.ts), its sums from the state's and the appended requests'.
    const head = sessionHeader({ session, tokenModel: judge.tokenModel, totals: totalsOf(sums.sums) }, { ...sums, requests: sums.sums.requests });
    // The phux context stream over every event (kept in the state), each message's carrier among
    // the earlier carriers and the appended requests (report/phux.ts carrier: the first agent
    // request after its line; no other earlier request can be one, see carriersOf).
    const lineOf = new Map(state.carriers);
    const earlier = state.carriers.map(([index, line]): CarrierCandidate => ({ index, kind: 'agent', source: { file: session.path, line }, timeMs: null }));
    attachPhux(head, session, [...earlier, ...appended]);
    if (!continuable(head)) return miss('session-wide report parts');
    const carriers = carriersOf(head, (i) => (i <= count ? lineOf.get(i) : appended[i - count - 1]?.source.line));
    if (!carriers) return miss('a context message carrier without its line');
    // The state after the appended lines (for the next growth).
    const writer = new ChainWriter();
    const lastReq = appended[appended.length - 1];
    const contexts = lastReq ? [{ api: lastReq.api, provider: lastReq.provider, model: lastReq.model }] : state.pi.encoder.map((e) => e.ctx);
    // (A compaction continued from the last entry alone keeps entries it does not hold: NeedsFullRead, then the tree.)
    const pi = live.exportState(contexts, (n) => writer.ref(n));
    const next = bodyOf(pi, judge, calibration, sums, writer, carriers);
    const unreadable = sums.sums.requests === 0 && session.diagnostics.some((d) => d.severity === 'error');
    continuedRuns++;
    return { head, fresh, count, next, appended: appended.length, unreadable };
  } catch (e) {
    if (e instanceof NeedsFullRead && !tree) return NEEDS_TREE;
    // A state whose parts do not fit together (or the file's): a full read.
    return miss(e instanceof Error ? e.message : String(e));
  }
}

/**
 * Continues a Pi session from its saved state (continueCore) and renders the session's `--json`
 * block with the earlier requests' lines copied from `saved` (the output entry written with the
 * state).
 * @param now the file's identity now (the new output entry's)
 * @param linesOf pipeline.ts sessionJsonLines
 * @returns null when the state does not apply or the session cannot be continued (a full read then)
 */
export async function continuePi(ref: SessionRef, state: TailState, saved: Buffer[], now: Identity, linesOf: LinesOf, opts: TailOptions = {}): Promise<Continued | null> {
  const c = await continueCore(ref, state, now, opts);
  if (!c) return null;
  let section: Buffer[];
  try {
    section = requestSection(saved, c.count);
  } catch (e) {
    return miss(e instanceof Error ? e.message : String(e));
  }
  const chunks = splice(c.head, c.fresh, section, linesOf);
  return { chunks, requests: c.count + c.fresh.length, state: c.next, appended: c.appended, unreadable: c.unreadable };
}

/**
 * Continues a Pi session from its saved state (continueCore) into its report entry: `saved` is
 * the report the result entry holds for the state's identity (its requests are kept as they are).
 * @returns the report and the new state, or null (a full read then)
 */
export async function continueReport(ref: SessionRef, state: TailState, saved: SessionReport, now: Identity, opts: TailOptions = {}): Promise<{ report: SessionReport; state: TailBody | null } | null> {
  if (saved.requests.length !== state.judge.count) return miss('the saved report does not fit the state');
  const c = await continueCore(ref, state, now, opts);
  if (!c) return null;
  const report = c.head;
  report.requests = saved.requests.concat(c.fresh);
  return { report, state: c.next };
}

/**
 * The session's block: the header's lines up to `"requests"`, the saved requests' bytes, the new
 * requests' lines, the rest (each line through jsonText, as the CLI writes them); the closing
 * `    }` line is not part of a block (output.ts).
 */
function splice(head: SessionReport, fresh: RequestReport[], savedRequests: Buffer[], linesOf: LinesOf): Uint8Array[] {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length) chunks.push(enc.encode(`${text.join('\n')}\n`));
    text = [];
  };
  const saved = savedRequests.reduce((n, c) => n + c.length, 0);
  const total = saved > 0 || fresh.length > 0;
  const lines = [...linesOf(head, '    ')];
  if (lines.pop() !== '    }') throw new Error('session JSON does not end with its closing line');
  for (const line of lines) {
    const m = /^ {6}"requests": \[\](,?)$/.exec(line);
    if (!m || !total) {
      text.push(jsonText(line));
      continue;
    }
    text.push('      "requests": [');
    flush();
    if (saved) {
      // Chunks of whole lines (a text sink decodes each alone), without copying the large part:
      // each read chunk up to its last newline as it is; only the line across two chunks is
      // joined; the last line (it has no newline) gets its comma or not.
      let carry: Buffer[] = [];
      for (let c of savedRequests) {
        if (carry.length) {
          const nl = c.indexOf(10);
          if (nl < 0) {
            carry.push(c);
            continue;
          }
          chunks.push(Buffer.concat([...carry, c.subarray(0, nl + 1)]));
          c = c.subarray(nl + 1);
          carry = [];
        }
        const last = c.lastIndexOf(10);
        if (last >= 0) chunks.push(c.subarray(0, last + 1));
        if (last + 1 < c.length) carry.push(c.subarray(last + 1));
      }
      chunks.push(Buffer.concat([...carry, Buffer.from(fresh.length ? ',\n' : '\n')]));
    }
    if (fresh.length) {
      const inner = [...linesOf({ requests: fresh } as unknown as SessionReport, '    ')];
      // `    {`, `      "requests": [`, the requests…, `      ]`, `    }`
      for (const l of inner.slice(2, -2)) text.push(jsonText(l));
    }
    text.push(`      ]${m[1]}`);
  }
  flush();
  return chunks;
}

/** The saved output entry's bytes of a ref's (single) session (as read, in chunks), when valid for the state's identity. */
export async function savedBlock(ref: Pick<SessionRef, 'key'>, cacheDir: string, state: TailState): Promise<Buffer[] | null> {
  const out = await cachedOutput(ref, { cacheDir, id: state.identity });
  if (!out || out.blocks.length !== 1 || out.blocks[0].requests !== state.judge.count || out.blocks[0].unreadable) return null;
  try {
    return await readBlock(out, 0);
  } catch {
    return null;
  }
}


/**
 * The CLI's continuation of a ref whose output entry missed (src/cli/main.ts): its saved state,
 * the output entry saved with it, and the continued block; null when any is missing or does not
 * apply (the caller analyzes the ref in full, which saves a new state).
 * @param now the ref's identity now (what the new output entry is stored under)
 */
export async function continueFromCache(ref: SessionRef, cacheDir: string, now: Identity, linesOf: LinesOf, opts: TailOptions = {}): Promise<Continued | null> {
  if (ref.host !== 'pi' || now.captures !== null) return null;
  const state = await loadTail(cacheDir, ref.key);
  if (!state) return miss('no state saved (or a corrupt, foreign or other-version one)');
  const saved = await savedBlock(ref, cacheDir, state);
  if (!saved) return miss('no output entry saved with the state');
  return continuePi(ref, state, saved, now, linesOf, opts);
}
