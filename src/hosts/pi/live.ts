/**
 * A Pi session read incrementally as it grows (Pi appends one JSON line per entry).
 *
 * The reader keeps what a full read builds — the validated entry tree, and the encoder whose
 * memoized states are the chain tails of every entry — and continues at the end of the last
 * complete line: an update reads only the appended bytes, validates and links the new entries,
 * and rebuilds the request list from memoized states (new entries are encoded once; old ones are
 * not touched). The results are those of `readPiSession` on the whole file at that moment, except
 * that a last line without its newline yet is only taken once the newline is there.
 *
 * A file that no longer continues what was read (shorter, or its first 64 KiB or the 4 KiB before
 * the continuation point changed: rewritten, truncated, replaced) is read again from the start,
 * as is a file in an older format (migrated file-wide) or one that had no header yet.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { Diagnostic, Session } from '../../core/model.js';
import { openRegular } from '../files.js';
import { parseJsonLine, readLineBatches } from '../lines.js';
import type { TranscriptEvent } from '../../core/model.js';
import type { BlockNode } from '../../core/chain.js';
import { branchPoints, PiEncoder, PiRequestBuilder, transcriptEvents, type BuilderState, type EncodeContext, type StoredEncState } from './normalize.js';
import type { PiHeader } from './schema.js';
import { LineProblems } from '../numbers.js';
import { PI_SESSION_VERSION, PiReadAppend, PiReadBuilder, piSessionId, collectLine, initialProcess, readDiagnostics, type PiEntryRec, type PiProcessState, type PiRead, type RawSink, type ReadDiagnostics } from './read.js';

/** Bytes at the start of the file whose hash must not change. */
const HEAD_CHECK = 64 * 1024;
/** Bytes before the continuation point that must not change. */
const SEAM_CHECK = 4096;

/** What an update found. */
export type LiveChange = 'unchanged' | 'appended' | 'reset';

async function readRange(file: string, start: number, end: number): Promise<Buffer> {
  const { handle } = await openRegular(file);
  try {
    const buf = Buffer.alloc(Math.max(0, end - start));
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}

/**
 * Lines of `file` from `start`: complete ones go to `raws` as object lines (their diagnostics to
 * `problems`); the end of the last complete line is returned. With `limit`, a complete line that ends after it
 * is left for a later update.
 */
async function consume(file: string, start: number, firstLine: number, raws: RawSink, problems: LineProblems, limit?: number) {
  let end = start;
  let line = firstLine - 1;
  let lines = 0;
  let pending: Diagnostic | null = null;
  // A chunk's lines at a time, with their bytes: collectLine copies a tool result's long texts from
  // the line's own literals, as a full read (readJsonLineBatches) does, instead of encoding them again.
  read: for await (const batch of readLineBatches(file, { start, firstLine, keepBytes: true })) {
    for (const l of batch) {
      if (limit !== undefined && l.eol && l.end! > limit) break read;
      if (l.oversized === undefined && l.text.trim() === '') {
        // Blank lines are skipped (as in a full read); a blank last line may still grow: not consumed.
        if (!l.eol) break read;
        end = l.end!;
        line = l.line;
        continue;
      }
      const r = parseJsonLine(file, l);
      if (!l.eol) {
        // Being written: read when its newline arrives (a full read would take a last line that is
        // already whole JSON; the live view waits for Pi's newline). One that does not parse yet is
        // reported as a full read would.
        if (!r.ok) pending = r.diagnostic;
        break read;
      }
      lines++;
      collectLine(
        !r.ok ? { line: l.line, diagnostic: r.diagnostic } : r.warnings ? { line: l.line, value: r.value, warnings: r.warnings } : l.bytes ? { line: l.line, value: r.value, bytes: l.bytes } : { line: l.line, value: r.value },
        raws,
        problems,
      );
      end = l.end!;
      line = l.line;
    }
  }
  return { end, line, lines, pending };
}

/**
 * Thrown when a session restored from a saved state (PiLiveSession.restore) needs an entry the
 * state does not hold (an appended entry whose parent is an older entry than the last one, a
 * context the last entry's encoder state was not saved for, a compaction keeping older entries):
 * the caller continues with the entry tree read again instead (PiLiveSession.restoreTree).
 */
export class NeedsFullRead extends Error {
  constructor(what: string) {
    super(`the saved state does not hold ${what}`);
  }
}

/** Stands for every entry of a restored session except the last: any use of it needs a full read. */
const UNKNOWN_ENTRY: PiEntryRec = Object.defineProperties({} as PiEntryRec, Object.fromEntries(
  ['line', 'order', 'id', 'parentId', 'type', 'timestamp', 'entry', 'parent', 'thinkingLevel', 'model', 'sentThinking', 'compaction'].map((k) => [
    k,
    {
      get(): never {
        throw new NeedsFullRead('an entry before the last one');
      },
    },
  ]),
));

/** 32-bit FNV-1a of an entry id's UTF-16 code units (PiTailState.idHashes). */
function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Distinct id hashes, sorted, as the base64 of their little-endian 32-bit words. */
function packHashes(hashes: Iterable<number>): string {
  const a = Uint32Array.from(new Set(hashes)).sort();
  const b = Buffer.alloc(a.length * 4);
  for (let i = 0; i < a.length; i++) b.writeUInt32LE(a[i], i * 4);
  return b.toString('base64');
}

function unpackHashes(packed: string): Uint32Array {
  const b = Buffer.from(packed, 'base64');
  if (b.length % 4) throw new Error('id hashes are not 32-bit words');
  const out = new Uint32Array(b.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = b.readUInt32LE(i * 4);
  return out;
}

/**
 * The entry ids of a restored session: the entries it holds (the last one, the appended ones),
 * and the hashes of every earlier id. An id whose hash is among those may be an earlier entry's
 * (a duplicate id, a parent before the last entry): asking for it throws NeedsFullRead, and the
 * entry tree read again answers exactly (a hash shared by chance only costs that read).
 */
class SavedIds extends Map<string, PiEntryRec> {
  constructor(readonly hashes: Set<number>) {
    super();
  }

  override has(id: string): boolean {
    if (super.has(id)) return true;
    this.check(id);
    return false;
  }

  override get(id: string): PiEntryRec | undefined {
    const r = super.get(id);
    if (r) return r;
    this.check(id);
    return undefined;
  }

  private check(id: string): void {
    if (this.hashes.has(idHash(id))) throw new NeedsFullRead('an entry before the last one (an id of the same hash)');
  }
}

/**
 * PiLiveSession.exportState's plain-data form (JSON-safe): where the read stopped and what
 * continuing it needs. Bounded except for `idHashes` (4 bytes per entry, for the duplicate and
 * dangling parent checks of appended entries) and the diagnostics so far.
 */
export interface PiTailState {
  /** Byte offset just after the last consumed line; 1-based number of that line; non-blank lines consumed. */
  offset: number;
  lastLine: number;
  lines: number;
  /** SHA-256 (hex) of the first min(offset, 64 KiB) bytes, and the 4 KiB before `offset` (base64). */
  headHash: string;
  seam: string;
  header: PiHeader;
  /** Hashes (idHash) of the ids of every entry read, sorted, as the base64 of 32-bit words: 4 bytes per entry. */
  idHashes: string;
  /** Entries read (the last one's `order` + 1). */
  entries: number;
  /** The last entry: what its children need of it. */
  tip: { line: number; order: number; id: string; parentId: string | null; type: string; timestamp?: string; thinkingLevel: string; model: string | null };
  /** Pi's in-memory thinking level and model after the last entry (read.ts PiProcessState). */
  process: PiProcessState;
  /** Encoder states after the last entry, per encoding context. */
  encoder: StoredEncState[];
  builder: BuilderState;
  /** Diagnostics so far by phase (read.ts ReadDiagnostics); a phase past MAX_DIAGNOSTICS ends with the summary of its counted lines (`counted` set). */
  diagnostics: { lines: Diagnostic[]; head: Diagnostic[]; entries: Diagnostic[]; links: Diagnostic[] };
  ignored: Record<string, number>;
  title: string | null;
  /** Transcript events so far (phux context messages, compactions, branches), for the context stream. */
  events: TranscriptEvent[];
}

/** The id hashes of a read's entries (a restored read's: the earlier ones' and its own). */
function* idHashesOf(byId: Map<string, PiEntryRec>): Generator<number> {
  const saved = byId instanceof SavedIds ? byId.hashes : null;
  if (saved) yield* saved;
  for (const id of byId.keys()) {
    const h = idHash(id);
    if (!saved?.has(h)) yield h;
  }
}

/** Options of PiLiveSession.restore and restoreTree. */
export interface RestoreOptions {
  /**
   * The caller has just checked that the file starts with the bytes the state was saved from (its
   * first 64 KiB and the 4 KiB before the offset among them, e.g. cache/tail.ts grownFrom): the
   * first update does not hash them again.
   */
  checked?: boolean;
}

/** An incrementally read Pi session file. */
export class PiLiveSession {
  private read!: PiRead;
  private encoder!: PiEncoder;
  /** Byte offset just after the last consumed line. */
  private offset = 0;
  private lastLine = 0;
  private headHash = '';
  private seam: Buffer = Buffer.alloc(0);
  /** Diagnostic for a half-written last line (not consumed yet), shown until it completes. */
  private pending: Diagnostic | null = null;
  /** Consumed lines that were not blank (a full read's `lines`). */
  private lines = 0;
  /** Diagnostics by phase (see ReadDiagnostics), merged in a full read's order by session(). */
  private lineProblems: LineProblems;
  private parts: ReadDiagnostics;
  /** Requests built so far (continued by `session()`), null after a reset. */
  private builder: PiRequestBuilder | null = null;
  /** Transcript events of the first `eventsFor` entries, and the title they gave. */
  private events: TranscriptEvent[] = [];
  private eventsFor = 0;
  private title: string | undefined;
  /**
   * Requests of the previous `session()` that the last one kept as they were (the same objects,
   * first in its list): all of them after an append, 0 after a reset or a rebuild.
   */
  kept = 0;
  /** Continued from a saved state (restore, restoreTree): the earlier requests are the caller's. */
  private restored = false;
  /** The caller checked that the file starts with what was read (RestoreOptions): the next update skips `continues`. */
  private checked = false;
  /** An update's read failed after it had validated appended entries into `read` (not linked): the next update reads again. */
  private unfinished = false;
  /** fileState at the last full read (reset): what readAgainIfChanged compares with. */
  private fullReadOf: string | null = null;

  /**
   * Read once, not followed (open's `once`): after a full read the encoder keeps only the states
   * a later request or the exported state can start from (normalize.ts PiEncoder `branches`).
   */
  private once = false;

  private constructor(readonly file: string) {
    this.lineProblems = new LineProblems([], file);
    this.parts = readDiagnostics(file);
  }

  /** Byte offset just after the last consumed line. */
  get consumed(): number {
    return this.offset;
  }

  /** True while the file ends with a line not consumed yet (no newline: being written). */
  get pendingLine(): boolean {
    return this.pending !== null;
  }

  /**
   * The diagnostic of a half-written last line that does not parse yet (the same object
   * `session()` lists among its diagnostics), or null: what the live view does not call landed.
   */
  get pendingDiagnostic(): Diagnostic | null {
    return this.pending;
  }

  /**
   * Reads the whole file. Never throws for bad content (diagnostics, as readPiSession).
   * @param opts.holdBackLast leave the last complete line for the first `update` (the live
   *   analysis warms its continued path with it, src/live/session.ts)
   * @param opts.once the session is analyzed and its state exported, not followed (cache/tail.ts):
   *   the encoder then holds the states of the tree's branch points only, not one per entry; an
   *   `update` after it still gives the same results, but may encode again from the nearest kept
   *   state when the appended lines branch off an older entry
   */
  static async open(file: string, opts: { holdBackLast?: boolean; once?: boolean } = {}): Promise<PiLiveSession> {
    const s = new PiLiveSession(file);
    s.once = opts.once === true;
    let limit: number | undefined;
    if (opts.holdBackLast) {
      try {
        const { handle, size } = await openRegular(file);
        await handle.close();
        limit = size - 1;
      } catch {
        // unreadable: reset says so
      }
    }
    await s.reset(limit);
    return s;
  }

  /**
   * A file that cannot be continued (gone, not a regular file, no Pi header yet, no entries): read
   * again only when its stat moved since the last full read. Read again at every call, an
   * unchanged header-only session was "rewritten" at every poll, and a deleted one whose watcher
   * saw the CLI's own output in the same folder was re-reported thousands of times a second.
   */
  private async readAgainIfChanged(): Promise<LiveChange> {
    if ((await this.fileState()) === this.fullReadOf) return 'unchanged';
    await this.reset();
    return 'reset';
  }

  /** The file's stat as one string (device, inode, size, times, mode), or the error code of stat. */
  private async fileState(): Promise<string> {
    try {
      const st = await stat(this.file, { bigint: true });
      return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;
    } catch (e) {
      return `error:${(e as NodeJS.ErrnoException).code ?? String(e)}`;
    }
  }

  private async reset(limit?: number): Promise<void> {
    // Taken before the read: a change during it shows as another state at the next update. A read
    // that holds back the end of the file (open's warm-up) is not a full read.
    this.fullReadOf = limit === undefined ? await this.fileState() : null;
    this.unfinished = false;
    this.builder = null;
    this.events = [];
    this.eventsFor = 0;
    this.title = undefined;
    this.lineProblems = new LineProblems([], this.file);
    this.parts = readDiagnostics(this.file);
    const builder = new PiReadBuilder(this.file, [], {}, this.parts);
    this.encoder = new PiEncoder();
    this.offset = 0;
    this.lastLine = 0;
    this.lines = 0;
    this.pending = null;
    try {
      const r = await consume(this.file, 0, 1, builder, this.lineProblems, limit);
      this.offset = r.end;
      this.lastLine = r.line;
      this.lines = r.lines;
      this.pending = r.pending;
    } catch (e) {
      // What the builder validated before the error is dropped (the entries' diagnostics too).
      this.parts = readDiagnostics(this.file);
      this.parts.head.push({ file: this.file, line: 1, severity: 'error', message: `cannot read file: ${e instanceof Error ? e.message : String(e)}` });
      this.read = { file: this.file, header: null, version: PI_SESSION_VERSION, entries: [], byId: new Map(), diagnostics: [], ignored: {}, process: initialProcess() };
      return;
    }
    // A half-written line counts as a line for the empty-file check, as in a full read.
    this.read = builder.build(this.lines + (this.pending ? 1 : 0));
    if (this.once) this.encoder = new PiEncoder({ branches: branchPoints(this.read.entries) });
    await this.remember();
  }

  private async remember(): Promise<void> {
    const head = await readRange(this.file, 0, Math.min(this.offset, HEAD_CHECK));
    this.headHash = createHash('sha256').update(head).digest('hex');
    this.seam = await readRange(this.file, Math.max(0, this.offset - SEAM_CHECK), this.offset);
  }

  /** True when the file still starts with what was read. */
  private async continues(size: number): Promise<boolean> {
    if (size < this.offset) return false;
    const head = await readRange(this.file, 0, Math.min(this.offset, HEAD_CHECK));
    if (createHash('sha256').update(head).digest('hex') !== this.headHash) return false;
    const seam = await readRange(this.file, Math.max(0, this.offset - SEAM_CHECK), this.offset);
    return seam.equals(this.seam);
  }

  /**
   * What `restore` needs to continue this read in another process, or null when it cannot be
   * continued (no header, an older format, a half-written last line, no entries). The encoder states
   * after the last entry are saved for `contexts` (the next request's likely encodings).
   * @param ref index of a chain node in the caller's table (core/tailstate.ts ChainWriter.ref)
   */
  exportState(contexts: readonly EncodeContext[], ref: (n: BlockNode | null) => number): PiTailState | null {
    const read = this.read;
    if (!read.header || read.version !== PI_SESSION_VERSION || !read.entries.length || this.pending || !this.builder) return null;
    if (this.eventsFor !== read.entries.length) return null;
    const tip = read.entries[read.entries.length - 1];
    const encoder: StoredEncState[] = [];
    for (const c of contexts) if (!encoder.some((e) => e.ctx.api === c.api && e.ctx.provider === c.provider && e.ctx.model === c.model)) encoder.push(this.encoder.exportState(tip, c, ref));
    return {
      offset: this.offset,
      lastLine: this.lastLine,
      lines: this.lines,
      headHash: this.headHash,
      seam: this.seam.toString('base64'),
      header: read.header,
      idHashes: packHashes(idHashesOf(read.byId)),
      entries: read.entries.length,
      tip: { line: tip.line, order: tip.order, id: tip.id, parentId: tip.parentId, type: tip.type, ...(tip.timestamp !== undefined ? { timestamp: tip.timestamp } : {}), thinkingLevel: tip.thinkingLevel, model: tip.model },
      process: { ...read.process },
      encoder,
      builder: this.builder.exportState(),
      diagnostics: this.diagnosticLists(),
      ignored: { ...read.ignored },
      title: this.title ?? null,
      events: this.events.map((e) => ({ ...e })),
    };
  }

  /**
   * A session read continued from `state` (exportState, possibly of another process): `update`
   * then reads only what was appended after `state.offset`, and `session()` builds only the
   * appended requests (the earlier places of its `requests` are empty: their reports are the
   * caller's). Entries before the last one are not held: an update that needs one throws
   * NeedsFullRead (so does `session()`).
   * @param nodeOf the chain node at an index of the caller's table
   */
  static restore(file: string, state: PiTailState, nodeOf: (i: number) => BlockNode | null, opts: RestoreOptions = {}): PiLiveSession {
    const s = new PiLiveSession(file);
    s.checked = opts.checked === true;
    const t = state.tip;
    const tip: PiEntryRec = { line: t.line, order: t.order, id: t.id, parentId: t.parentId, type: t.type, entry: null, parent: UNKNOWN_ENTRY, thinkingLevel: t.thinkingLevel, model: t.model, sentThinking: null, compaction: null };
    if (t.timestamp !== undefined) tip.timestamp = t.timestamp;
    Object.defineProperty(tip, 'entry', {
      get(): never {
        throw new NeedsFullRead('the last entry itself');
      },
    });
    if (t.order !== state.entries - 1) throw new Error('the last entry is not the last of the entries');
    // Every earlier place holds the stand-in (a walk over the entries needs them: a full read).
    const entries: PiEntryRec[] = new Array<PiEntryRec>(state.entries).fill(UNKNOWN_ENTRY);
    entries[t.order] = tip;
    const byId = new SavedIds(new Set(unpackHashes(state.idHashes)));
    byId.set(t.id, tip);
    s.read = { file, header: state.header, version: PI_SESSION_VERSION, entries, byId, diagnostics: [], ignored: { ...state.ignored }, process: { ...state.process } };
    const d = state.diagnostics;
    s.lineProblems = LineProblems.resume(d.lines, file);
    s.parts = { head: [...d.head], entries: LineProblems.resume(d.entries, file), links: LineProblems.resume(d.links, file) };
    s.continueFrom(state, tip, nodeOf);
    return s;
  }

  /**
   * `restore` with the whole entry tree read again from the file (up to `state.offset`; the
   * lines are parsed and validated, nothing is encoded): for appended lines that need entries
   * before the last one (a branch back to an earlier entry, a request in an encoding the state
   * has no encoder state for, a compaction keeping earlier entries). The encoder then encodes
   * only the path such an appended request needs; the earlier requests are neither built nor
   * judged again. @throws Error when the file before `state.offset` is not what the state was
   * saved from (other lines, entries, ids or diagnostics)
   */
  static async restoreTree(file: string, state: PiTailState, nodeOf: (i: number) => BlockNode | null, opts: RestoreOptions = {}): Promise<PiLiveSession> {
    const s = new PiLiveSession(file);
    s.checked = opts.checked === true;
    const ignored: Record<string, number> = {};
    const builder = new PiReadBuilder(file, [], ignored, s.parts);
    const r = await consume(file, 0, 1, builder, s.lineProblems, state.offset);
    if (r.end !== state.offset || r.pending || r.line !== state.lastLine || r.lines !== state.lines) throw new Error('the file up to the saved offset has other lines');
    s.read = builder.build(r.lines);
    const read = s.read;
    const tip = read.entries[read.entries.length - 1];
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    // Field by field (a state's objects come from its schema, in the schema's key order).
    const flat = (d: PiTailState['diagnostics']) => [d.lines, d.head, d.entries, d.links].map((l) => l.map((x) => [x.file, x.line, x.message, x.severity]));
    if (
      !read.header ||
      read.version !== PI_SESSION_VERSION ||
      read.entries.length !== state.entries ||
      tip?.id !== state.tip.id ||
      tip.line !== state.tip.line ||
      packHashes(idHashesOf(read.byId)) !== state.idHashes ||
      !same(ignored, state.ignored) ||
      !same(flat(s.diagnosticLists()), flat(state.diagnostics))
    ) {
      throw new Error('the entries up to the saved offset are not those the state was saved from');
    }
    s.continueFrom(state, tip, nodeOf);
    return s;
  }

  /** The diagnostics by phase (new arrays), each phase's counted lines as its last one (LineProblems.withSummary): what the tail state saves. */
  private diagnosticLists(): PiTailState['diagnostics'] {
    return { lines: this.lineProblems.withSummary(), head: [...this.parts.head], entries: this.parts.entries.withSummary(), links: this.parts.links.withSummary() };
  }

  /** The rest of a restore: encoder states on the last entry, the request builder, offsets, events. */
  private continueFrom(state: PiTailState, tip: PiEntryRec, nodeOf: (i: number) => BlockNode | null): void {
    this.restored = true;
    this.encoder = new PiEncoder();
    for (const e of state.encoder) this.encoder.importState(tip, e, nodeOf);
    this.builder = PiRequestBuilder.restore(this.read, this.encoder, state.builder);
    this.offset = state.offset;
    this.lastLine = state.lastLine;
    this.lines = state.lines;
    this.headHash = state.headHash;
    this.seam = Buffer.from(state.seam, 'base64');
    this.eventsFor = state.entries;
    this.events = state.events.map((e) => ({ ...e }));
    if (state.title !== null) this.title = state.title;
    this.kept = state.builder.count;
  }

  /**
   * Reads what was appended since the last call (or everything again when the file no longer
   * continues what was read).
   */
  async update(): Promise<LiveChange> {
    let size: number;
    try {
      const { handle, size: s } = await openRegular(this.file);
      await handle.close();
      size = s;
    } catch {
      return this.readAgainIfChanged();
    }
    if (this.unfinished) {
      // An append whose read failed left entries without their links: read again.
      await this.reset();
      return 'reset';
    }
    const incremental = this.read.header !== null && this.read.version === PI_SESSION_VERSION && this.read.entries.length > 0;
    if (!incremental) return this.readAgainIfChanged();
    const checked = this.checked;
    this.checked = false;
    if (!(checked || (await this.continues(size)))) {
      await this.reset();
      return 'reset';
    }
    if (size === this.offset && !this.pending) return 'unchanged';
    // The appended lines are validated into the read as they come (PiReadAppend), linked below.
    const append = new PiReadAppend(this.read, this.parts);
    let r: Awaited<ReturnType<typeof consume>>;
    try {
      r = await consume(this.file, this.offset, this.lastLine + 1, append, this.lineProblems);
    } catch (e) {
      this.unfinished = true;
      throw e;
    }
    const changed = r.end !== this.offset || (this.pending?.message ?? null) !== (r.pending?.message ?? null);
    this.pending = r.pending;
    if (r.end === this.offset) return changed ? 'appended' : 'unchanged';
    // An appended entry reusing an earlier entry's id: a full read links that entry's earlier
    // children to the later one (read.ts link: a parent on a later line, so roots), which changes
    // earlier requests. Read again (a restored session: the caller reads the file in full).
    if (append.reused) {
      if (this.restored) throw new Error('an appended entry reuses an earlier id (a full read links earlier entries to it)');
      await this.reset();
      return 'reset';
    }
    const before = this.offset;
    this.offset = r.end;
    this.lastLine = r.line;
    this.lines += r.lines;
    append.end();
    this.seam = await readRange(this.file, Math.max(0, this.offset - SEAM_CHECK), this.offset);
    // The head hash covers min(offset, HEAD_CHECK) bytes: again while the old offset was short of it.
    if (before < HEAD_CHECK) await this.remember();
    return 'appended';
  }

  /**
   * The session as readPiSession would read the file now (reconstructed evidence). Continues the
   * previous call's requests and events (see `kept`), so an append costs its own entries.
   */
  session(): Session {
    const read = this.read;
    const before = this.builder?.requests.length ?? 0;
    if (this.builder?.extend()) this.kept = before;
    else if (this.restored) {
      // The earlier requests are not held here (restore): priced again with a new rate, they must be judged again too.
      throw new Error('earlier requests rebuilt (a new rate)');
    } else {
      this.builder = new PiRequestBuilder(read, this.encoder);
      this.builder.extend();
      this.kept = 0;
    }
    for (let i = this.eventsFor; i < read.entries.length; i++) {
      const e = read.entries[i].entry;
      if (e?.type === 'session_info') this.title = e.name?.trim() || undefined;
    }
    transcriptEvents(read, this.eventsFor, this.events);
    this.eventsFor = read.entries.length;
    const d = this.diagnosticLists();
    const session: Session = {
      host: 'pi',
      id: piSessionId(read),
      path: this.file,
      requests: [...this.builder.requests],
      diagnostics: [...d.lines, ...(this.pending ? [this.pending] : []), ...d.head, ...d.entries, ...d.links],
      ignored: read.ignored,
      events: [...this.events],
    };
    if (this.title) session.title = this.title;
    if (read.header?.cwd) session.cwd = read.header.cwd;
    return session;
  }
}
