/**
 * Reads a Pi session file (JSONL) into a tree of validated entries, tolerating bad input.
 *
 * Format: reference/pi.md §1 (Pi 0.73.1 `session-manager.ts`): line 1 is the header
 * `{"type":"session","version":3,"id",…}`, every further line one entry with `id`/`parentId`.
 * Older files are migrated **in memory only** (Pi itself rewrites the file on load; Prefix Lens is
 * read-only), following `migrateV1ToV2` / `migrateV2ToV3` (session-manager.ts l.216-275):
 *   v1 → v2: entries get `id`/`parentId` as a linear chain in file order, and
 *            `compaction.firstKeptEntryIndex` (an index into the file's entries, header = 0) becomes
 *            `firstKeptEntryId`;
 *   v2 → v3: message role `hookMessage` → `custom`.
 * Those migrations (and the version guess of a file without a header) are file-wide, so such a file
 * is held whole until it is read; a file of the current version is validated line by line as it is
 * read (PiReadBuilder), holding its entries only.
 * Bad input never throws: a malformed or truncated line, an entry that does not fit its schema, a
 * dangling `parentId` each give a Diagnostic with file and line, and the rest is read; past
 * MAX_DIAGNOSTICS of a kind (lines, entries, links: see ReadDiagnostics) they are only counted
 * into one summary (numbers.ts LineProblems). Unknown entry types stay in the tree (so their
 * children keep their path) and are counted in `ignored`.
 */
import type { z } from 'zod';
import { readJsonLineBatches, type JsonLineResult } from '../lines.js';
import { describeIssues } from '../issues.js';
import type { Diagnostic } from '../../core/model.js';
import { bump, ownGet } from '../../core/own.js';
import { checkHostValues, hostValuesMessage, LineProblems } from '../numbers.js';
import {
  AgentMessageSchema,
  ENTRY_SCHEMAS,
  EntryBaseSchema,
  HeaderSchema,
  KNOWN_ROLES,
  PI_VALUES,
  fastAgentMessage,
  fastEntryBase,
  fastMessageEntry,
  type PiEntry,
  type PiEntryType,
  type PiHeader,
  type ToolResultMessage,
} from './schema.js';
import { JsonLiteral, LITERAL_CHARS, literalOf } from '../../core/literal.js';
import { piSessionIdOfFile } from './locate.js';
import { contentTextSpans } from './rawtext.js';

/**
 * The diagnostic of a file of 0 bytes or only blank lines. Pi writes a session file only once it
 * holds an assistant message (reference/pi.md §1, lazy write), so such a file was cut or emptied.
 */
export const EMPTY_SESSION_FILE = 'empty session file (0 bytes or only blank lines): no header, no entries, nothing to analyze';

/** Pi's current session format version (`CURRENT_SESSION_VERSION`, session-manager.ts). */
export const PI_SESSION_VERSION = 3;

/** One entry of the session tree, with what the reader derived from its path. */
export interface PiEntryRec {
  /** 1-based line in the session file. */
  line: number;
  /** 0-based position among the tree entries in file order (header excluded). */
  order: number;
  id: string;
  parentId: string | null;
  /** Entry type as written (`message`, `compaction`, … or an unknown type). */
  type: string;
  /** ISO time the entry was appended, when present. */
  timestamp?: string;
  /** The validated entry, or null when it is kept only as a tree node (unknown type, schema mismatch). */
  entry: PiEntry | null;
  /** Parent entry (null for a root, or when `parentId` does not resolve to an earlier entry). */
  parent: PiEntryRec | null;
  /** Thinking level on the path root→this entry: the last `thinking_level_change`, default `"off"`. */
  thinkingLevel: string;
  /**
   * Model on the path root→this entry (`provider\u0000model`): the last `model_change` or assistant
   * message, as Pi's `buildSessionContext` restores it (reference/pi.md §1); null before any.
   */
  model: string | null;
  /**
   * An assistant entry's request: the thinking level Pi sent it with (Pi's in-memory level, which
   * can differ from `thinkingLevel` after a tree navigation: see `PiProcessState`); else null.
   */
  sentThinking: string | null;
  /** The last `compaction` entry on the path root→this entry (this entry included), or null. */
  compaction: PiEntryRec | null;
}

/**
 * True when an entry was appended away from the entry before it in file order: the first entry
 * after a tree navigation (see PiProcessState), the start of another branch. (Parents precede
 * their children: `order` is the entry's place in PiRead.entries.)
 */
export function branchStart(rec: PiEntryRec): boolean {
  return rec.parent !== null && rec.parent.order !== rec.order - 1;
}

/** A read session file. */
export interface PiRead {
  file: string;
  /** The header line, or null when line 1 is not a valid Pi session header. */
  header: PiHeader | null;
  /** Format version of the file as written (1 when the header has none). */
  version: number;
  /** Tree entries in file order. */
  entries: PiEntryRec[];
  byId: Map<string, PiEntryRec>;
  diagnostics: Diagnostic[];
  /** Entry types (and `message:<role>` for unknown message roles) kept as ignored, with counts. */
  ignored: Record<string, number>;
  /** Pi's in-memory state after the last entry (file order). */
  process: PiProcessState;
}

/**
 * The session id of a read file: the header's, else the one its file name gives (a missing or
 * damaged header; the read's diagnostics say which line). Pi named the file after the id it
 * sends (`prompt_cache_key`), so the id stays the intact file's.
 */
export function piSessionId(read: Pick<PiRead, 'file' | 'header'>): string {
  return read.header?.id ?? piSessionIdOfFile(read.file);
}

/**
 * What the Pi process that wrote the entries held in memory after the last one, followed in file
 * order: the thinking level and model it sends with.
 *
 * Pi 0.73.1 keeps both in `agent.state`: `setThinkingLevel`/`setModel` change them and append a
 * `thinking_level_change`/`model_change` on the current leaf; a new process restores both from
 * the path of the last entry in file order (sdk.ts `buildSessionContext`); but an in-process tree
 * navigation (`navigateTree`, agent-session.ts l.2283: only `agent.state.messages` is replaced)
 * keeps them, so the requests on the branch it moved to are sent with the level of the branch it
 * left while the new path says otherwise (recorded: pi/main line 38 was sent with thinking high,
 * budget 16384, where the path says off). A navigation shows in the file: an entry whose parent is
 * not the entry before it in file order (a new process starts at the last entry in file order,
 * reference/pi.md §1 "Tree, leaf, branches", so only a navigation appends elsewhere). The request
 * after it, sent with the model Pi held, was sent with the level Pi held (`carried`), whether or
 * not the path's model is another: the navigating process sends it (after a plain /tree the user
 * entry and the request are that process's; after a `branch_summary` it is taken to be). The
 * level stays carried until a thinking or model change entry, or a request sent with the path's
 * model where Pi held another (a new process restored the path). A new process on the same
 * model is not told apart: the level stays carried (the provider's read still contradicts a
 * wrong level, core/analyze.ts paramsConfirmed).
 */
export interface PiProcessState {
  /** The thinking level of the last request or `thinking_level_change` (`"off"` before any). */
  level: string;
  /** `provider\u0000model` of the last request or `model_change`, or null before any. */
  model: string | null;
  /** True while the level is carried over a navigation (the path says another level). */
  carried: boolean;
  /** True when an entry since the last request or thinking/model change was appended away from the entry before it in file order (a tree navigation). */
  navigated: boolean;
}

/** The state before the first entry. */
export const initialProcess = (): PiProcessState => ({ level: 'off', model: null, carried: false, navigated: false });

/** An object line of a session file, before validation. */
export interface RawLine {
  line: number;
  obj: Record<string, unknown>;
  /**
   * The entry's tool-result message, already validated (fastAgentMessage) when the line was
   * collected, its long texts then replaced by JsonLiterals (holdLiterals).
   */
  message?: ToolResultMessage;
}

/**
 * Reads and validates a Pi session file. A file whose first object line is a header of the current
 * version is validated line by line as it is read (PiReadBuilder): only its entries are held.
 * @param file path of the `.jsonl` file
 * @returns the entry tree plus diagnostics; an unreadable file gives one error diagnostic and no entries
 */
export async function readPiFile(file: string): Promise<PiRead> {
  const diagnostics: Diagnostic[] = [];
  // The line diagnostics: past MAX_DIAGNOSTICS only counted (a million bad lines, one summary).
  const problems = new LineProblems(diagnostics, file);
  const builder = new PiReadBuilder(file, diagnostics, {});
  let lines = 0;
  try {
    for await (const batch of readJsonLineBatches(file)) {
      for (const r of batch) {
        lines++;
        collectLine(r, builder, problems);
      }
    }
  } catch (e) {
    // Not a bad line: after the summary of those counted so far. (What the builder validated so far is dropped.)
    problems.close();
    diagnostics.push({ file, line: 1, severity: 'error', message: `cannot read file: ${e instanceof Error ? e.message : String(e)}` });
    return { file, header: null, version: PI_SESSION_VERSION, entries: [], byId: new Map(), diagnostics, ignored: {}, process: initialProcess() };
  }
  problems.close();
  return builder.build(lines);
}

/** Where collectLine puts the object lines: an array, or a reader that validates them as they come (PiReadBuilder, PiReadAppend). */
export interface RawSink {
  push(raw: RawLine): void;
}

/** One parsed line of a session file: kept as a raw entry (an object), or its diagnostic (to `problems`, the file's line diagnostics). */
export function collectLine(r: JsonLineResult, raws: RawSink, problems: LineProblems): void {
  if ('diagnostic' in r) {
    problems.push(r.diagnostic);
    return;
  }
  if (r.warnings) for (const w of r.warnings) problems.push(w);
  if (!r.value || typeof r.value !== 'object' || Array.isArray(r.value)) {
    problems.add(r.line, 'error', 'line is JSON but not an object; skipped');
    return;
  }
  const obj = r.value as Record<string, unknown>;
  const values: string[] = [];
  checkHostValues(obj, PI_VALUES, '', values);
  if (values.length) problems.add(r.line, 'warning', () => hostValuesMessage(values));
  const message = toolResultOf(obj, r.bytes);
  raws.push(message ? { line: r.line, obj, message } : { line: r.line, obj });
}

/**
 * A tool-result message entry's message, validated (the fast check only: anything else is left
 * to toRec's schemas) and with its long texts held as JsonLiterals right away, so the line's
 * strings die young instead of living until the whole file is read; else undefined.
 * @param bytes the line's bytes when it was read as valid UTF-8 (JsonLineResult.bytes): the
 *   literals are then copied from them where they are written as JSON.stringify writes them
 */
function toolResultOf(obj: Record<string, unknown>, bytes: Uint8Array | undefined): ToolResultMessage | undefined {
  if (obj.type !== 'message') return undefined;
  const m = obj.message as Record<string, unknown> | null | undefined;
  if (!m || typeof m !== 'object' || Array.isArray(m) || m.role !== 'toolResult') return undefined;
  const msg = fastAgentMessage(m);
  if (msg?.role !== 'toolResult') return undefined;
  holdLiterals(msg, bytes);
  return msg;
}

/**
 * Diagnostics of a read by phase, each in line order; a full read lists them as
 * lines (collectLine), head (header and version), entries (validation, duplicate ids), links
 * (parents, compactions' kept entry). The live reader keeps them apart so a grown file lists them
 * in the same order. Each phase of per-line diagnostics lists its first MAX_DIAGNOSTICS and
 * counts the rest (LineProblems; its `withSummary()` is the phase's list): a bound per phase, not
 * per file, so that lines appended to a live read are listed or counted as in a full read of the
 * grown file (the phases interleave in a live read); the session's foldDiagnostics then gives the
 * report it gave when every diagnostic was built.
 */
export interface ReadDiagnostics {
  head: Diagnostic[];
  entries: LineProblems;
  links: LineProblems;
}

/** Empty ReadDiagnostics of `file`. */
export function readDiagnostics(file: string): ReadDiagnostics {
  return { head: [], entries: new LineProblems([], file), links: new LineProblems([], file) };
}

/**
 * A read built from a file's object lines as collectLine gives them, in file order. When the first
 * one is a valid header of the current version (nothing to migrate), each later line is validated
 * into its entry as it comes (toRec and the duplicate id check, addEntry), and a line
 * that is no entry is dropped at once: what is held is the session's entries, not every line read
 * (a million `{}` lines cost their count in a summary, not a million objects). Parents and
 * compactions' kept entries are checked once every entry is known (`build`), as in buildPiRead, so
 * the read is buildPiRead's over the same lines: the same entries, tree and diagnostics in the same
 * order. Other files (an older version, a newer one, no valid header) are held whole and given to
 * buildPiRead, whose migrations and version guess are file-wide.
 */
export class PiReadBuilder {
  /** The object lines held for buildPiRead (none once validating as they come). */
  private readonly raws: RawLine[] = [];
  /** The read the lines are validated into, once the first object line is a current header. */
  private read: PiRead | null = null;
  private first = true;

  /**
   * @param diagnostics the read's diagnostics (the line diagnostics go there before `build`)
   * @param ignored counts of the entry types kept as ignored (the read's)
   * @param parts where the phases' diagnostics are also left (see buildPiRead)
   */
  constructor(
    private readonly file: string,
    private readonly diagnostics: Diagnostic[],
    private readonly ignored: Record<string, number>,
    private readonly parts: ReadDiagnostics = readDiagnostics(file),
  ) {}

  push(raw: RawLine): void {
    if (this.read) {
      addEntry(this.read, raw, this.parts.entries);
      return;
    }
    if (this.first) {
      this.first = false;
      // buildPiRead's header of the same line, when it has nothing to migrate or warn about.
      const h = raw.obj.type === 'session' ? HeaderSchema.safeParse(raw.obj) : null;
      if (h?.success && (h.data.version ?? 1) === PI_SESSION_VERSION) {
        this.read = { file: this.file, header: h.data, version: PI_SESSION_VERSION, entries: [], byId: new Map(), diagnostics: this.diagnostics, ignored: this.ignored, process: initialProcess() };
        return;
      }
    }
    this.raws.push(raw);
  }

  /** The read of the lines pushed (`lines` = non-blank lines seen, objects or not: buildPiRead's empty-file check; a file read as it came has its header). */
  build(lines: number): PiRead {
    const read = this.read;
    if (!read) return buildPiRead(this.file, this.raws, lines, this.diagnostics, this.ignored, this.parts);
    linkEntries(read, read.entries, this.parts.links);
    const { parts } = this;
    this.diagnostics.push(...parts.head, ...parts.entries.withSummary(), ...parts.links.withSummary());
    return read;
  }
}

/**
 * The read session from its object lines (`lines` = non-blank lines seen, objects or not):
 * header, in-memory migrations of older versions, validation, the entry tree. The phases'
 * diagnostics are appended to `diagnostics` (after the line diagnostics it already holds), and
 * also left in `parts` when given.
 */
export function buildPiRead(
  file: string,
  raws: RawLine[],
  lines: number,
  diagnostics: Diagnostic[],
  ignored: Record<string, number>,
  parts: ReadDiagnostics = readDiagnostics(file),
): PiRead {
  if (lines === 0) {
    // An error, as an unreadable file: nothing to analyze (`analyze` of it alone exits 2, `check` fails).
    parts.head.push({ file, line: 1, severity: 'error', message: EMPTY_SESSION_FILE });
    diagnostics.push(...parts.head);
    return { file, header: null, version: PI_SESSION_VERSION, entries: [], byId: new Map(), diagnostics, ignored, process: initialProcess() };
  }

  // Header: the first parsed line (session-manager.ts loadEntriesFromFile: entries[0] must be the header).
  let header: PiHeader | null = null;
  const first = raws[0];
  if (first && first.obj.type === 'session') {
    const h = HeaderSchema.safeParse(first.obj);
    if (h.success) header = h.data;
    else parts.head.push({ file, line: first.line, severity: 'error', message: `invalid session header (${describeIssues(h.error)}); session id from the file name: ${piSessionIdOfFile(file)}` });
    raws.shift();
  } else {
    // A valid header on a later line (the lines before it other objects): the file's own header,
    // whose id Pi sent as the cache key. Pi itself takes a file whose first parsed line is not the
    // header as invalid (reference/pi.md §1), so the diagnostic says so; the read uses that header.
    const at = raws.findIndex((r) => r.obj.type === 'session' && HeaderSchema.safeParse(r.obj).success);
    const late = at >= 0 ? raws[at] : undefined;
    if (late) header = HeaderSchema.parse(late.obj);
    parts.head.push({
      file,
      line: first?.line ?? 1,
      severity: 'error',
      message: late
        ? `session header found on line ${late.line}; Pi expects it on line 1 (the first line is not {"type":"session",…}) and would treat the file as invalid. Reading it with that header anyway: session id ${header!.id}`
        : `first line is not a Pi session header ({"type":"session",…}); Pi would treat the file as invalid. Reading the entries anyway, session id from the file name: ${piSessionIdOfFile(file)}`,
    });
    if (late) {
      // Pi's v1 index counts the header where it is.
      const fileIndexed = raws.map((r) => (r === late ? null : r));
      raws.splice(at, 1);
      return finishRead(file, header, raws, fileIndexed, first, diagnostics, ignored, parts);
    }
  }
  // Pi indexes v1 `firstKeptEntryIndex` into the parsed lines with the header at 0.
  const fileIndexed: Array<RawLine | null> = header || first?.obj.type === 'session' ? [null, ...raws] : raws;
  return finishRead(file, header, raws, fileIndexed, first, diagnostics, ignored, parts);
}

/** buildPiRead past the header: the version, the in-memory migrations, validation, the entry tree. */
function finishRead(
  file: string,
  header: PiHeader | null,
  raws: RawLine[],
  fileIndexed: Array<RawLine | null>,
  first: RawLine | undefined,
  diagnostics: Diagnostic[],
  ignored: Record<string, number>,
  parts: ReadDiagnostics,
): PiRead {

  const version = header ? (header.version ?? 1) : raws.some((r) => typeof r.obj.id === 'string') ? PI_SESSION_VERSION : 1;
  if (version > PI_SESSION_VERSION) {
    parts.head.push({
      file,
      line: first?.line ?? 1,
      severity: 'warning',
      message: `session format version ${version} is newer than ${PI_SESSION_VERSION}; read as version ${PI_SESSION_VERSION}`,
    });
  }
  if (version < 2) migrateV1(raws, fileIndexed);
  if (version < 3) migrateV2(raws);

  const read: PiRead = { file, header, version, entries: [], byId: new Map(), diagnostics, ignored, process: initialProcess() };
  for (const raw of raws) addEntry(read, raw, parts.entries);
  linkEntries(read, read.entries, parts.links);
  // Bounded: each phase of per-line diagnostics holds at most MAX_DIAGNOSTICS and its summary.
  diagnostics.push(...parts.head, ...parts.entries.withSummary(), ...parts.links.withSummary());
  return read;
}

/**
 * Lines written after the ones `read` holds (a session that grew), with the checks and results
 * `readPiFile` gives for them over the whole file; their diagnostics go to `parts` (the caller
 * merges them in order). Only for files already in the current format (`read.version ===
 * PI_SESSION_VERSION` with a header): older versions are migrated file-wide, so the caller reads
 * them again instead. Each appended object line is validated into `read` as it comes (a line that
 * is no entry dropped at once); the parents and compactions of the new entries are checked at
 * `end`, once every appended entry is known. Stops taking lines at the first one whose `id` is an
 * entry's from before the append (`reused`): a full read links that entry's earlier children to
 * the later one, so the caller reads the file again instead of calling `end` (`read` then holds
 * the entries validated before that line, unlinked).
 */
export class PiReadAppend {
  /** The entries appended so far. */
  readonly added: PiEntryRec[] = [];
  /** An appended line's `id` (a string, entry or not) is the id of an entry from before the append. */
  reused = false;
  /** Entries before the append. */
  private readonly before: number;

  constructor(
    private readonly read: PiRead,
    private readonly parts: ReadDiagnostics,
  ) {
    this.before = read.entries.length;
  }

  push(raw: RawLine): void {
    if (this.reused) return;
    const id = raw.obj.id;
    // An id first seen in this append is looked up before its entry is added, as among the ids
    // before the append (a restored read's SavedIds throws NeedsFullRead there when an earlier
    // entry's id may be it); one appended earlier in this append is no reuse.
    if (typeof id === 'string') {
      const known = this.read.byId.get(id);
      if (known && known.order < this.before) {
        this.reused = true;
        return;
      }
    }
    const rec = addEntry(this.read, raw, this.parts.entries);
    if (rec) this.added.push(rec);
  }

  /** Links the appended entries and checks their compactions; @returns them (also in `read.entries`). */
  end(): PiEntryRec[] {
    linkEntries(this.read, this.added, this.parts.links);
    return this.added;
  }
}

/** Validates one object line into `read` (toRec), with the duplicate id check; @returns the entry, or null when the line is none. */
function addEntry(read: PiRead, raw: RawLine, problems: LineProblems): PiEntryRec | null {
  const rec = toRec(raw, read.entries.length, problems, read.ignored);
  if (!rec) return null;
  if (read.byId.has(rec.id)) problems.add(rec.line, 'warning', () => `duplicate entry id ${rec.id}; the later entry wins (as in Pi)`);
  read.byId.set(rec.id, rec);
  read.entries.push(rec);
  return rec;
}

/** The links phase of `entries` of `read` (every entry of the read already in `read.byId`): parents, then compactions' kept entry. */
function linkEntries(read: PiRead, entries: PiEntryRec[], problems: LineProblems): void {
  link(read, entries, problems);
  checkCompactions(read, entries, problems);
}

/**
 * A warning at each compaction among `entries` whose `firstKeptEntryId` is missing or names no
 * earlier entry of its own branch (not found, the compaction itself, a later entry, an entry of
 * another branch): no entry before the compaction is then kept — the context after it is the
 * summary, then the entries after the compaction, as Pi's context builder does
 * (`buildSessionContext` keeps path entries from the first kept one; none when it is not on the
 * path) and as normalize.ts reads it. Walks each such compaction's ancestors once.
 */
function checkCompactions(read: PiRead, entries: PiEntryRec[], problems: LineProblems): void {
  for (const rec of entries) {
    const e = rec.entry;
    if (e?.type !== 'compaction') continue;
    const id = e.firstKeptEntryId;
    let why: string;
    if (id === undefined) why = 'compaction without firstKeptEntryId';
    else {
      let onPath = false;
      for (let r = rec.parent; r && !onPath; r = r.parent) onPath = r.id === id;
      if (onPath) continue;
      const t = read.byId.get(id);
      const what = id === rec.id ? 'is this compaction itself' : !t ? 'not found' : t.order > rec.order ? `is a later entry (line ${t.line})` : `is not an earlier entry of this branch (line ${t.line})`;
      why = `compaction firstKeptEntryId ${JSON.stringify(id)} ${what}`;
    }
    problems.add(rec.line, 'warning', () => `${why}: no entry before the compaction is kept (its context is read as the summary, then the entries after it, as Pi builds it)`);
  }
}

/** v1 → v2 in memory: a linear id chain in file order; firstKeptEntryIndex → firstKeptEntryId. */
function migrateV1(raws: RawLine[], fileIndexed: Array<RawLine | null>): void {
  let prev: string | null = null;
  for (const r of raws) {
    // Deterministic ids (Pi draws random 8-hex ids); the line number makes them unique.
    const id = `v1-line-${r.line}`;
    r.obj.id = id;
    r.obj.parentId = prev;
    prev = id;
  }
  for (const r of raws) {
    if (r.obj.type !== 'compaction' || typeof r.obj.firstKeptEntryIndex !== 'number') continue;
    const target = fileIndexed[r.obj.firstKeptEntryIndex];
    if (target) r.obj.firstKeptEntryId = target.obj.id;
    delete r.obj.firstKeptEntryIndex;
  }
}

/** v2 → v3 in memory: message role `hookMessage` → `custom`. */
function migrateV2(raws: RawLine[]): void {
  for (const r of raws) {
    const m = r.obj.message as Record<string, unknown> | undefined;
    if (r.obj.type === 'message' && m && typeof m === 'object' && m.role === 'hookMessage') m.role = 'custom';
  }
}

/**
 * Validates one entry. The common case (a message entry as Pi writes it) takes the fast checks of
 * schema.ts, which give the schemas' verdict and output without copying; anything else, and every
 * failure, goes through the zod schemas, so diagnostics are unchanged.
 */
function toRec(raw: RawLine, order: number, problems: LineProblems, ignored: Record<string, number>): PiEntryRec | null {
  const fast = fastEntryBase(raw.obj);
  if (fast?.type === 'message' && fastMessageEntry(raw.obj)) {
    const msg = raw.message ?? fastAgentMessage((raw.obj as { message: Record<string, unknown> }).message);
    if (msg) {
      const { id, parentId, timestamp } = fast;
      const rec: PiEntryRec = { line: raw.line, order, id, parentId, type: 'message', timestamp: timestamp ?? undefined, entry: null, parent: null, thinkingLevel: 'off', model: null, sentThinking: null, compaction: null };
      rec.entry = { type: 'message', message: msg };
      return rec;
    }
  }
  let base = fast;
  if (!base) {
    // fastEntryBase gives EntryBaseSchema's verdict; zod words it, but only while the diagnostics
    // are still listed one by one (a million bad lines must not cost a million ZodErrors).
    const parsed = problems.listing ? EntryBaseSchema.safeParse(raw.obj) : null;
    if (parsed?.success) base = parsed.data;
    else {
      const type = typeof raw.obj.type === 'string' ? raw.obj.type : '(no type)';
      // Worded only while listing, when `parsed` holds zod's error.
      problems.add(raw.line, 'error', () => `${type} entry without a valid id/parentId (${describeIssues(parsed!.error)}); skipped`);
      return null;
    }
  }
  const { type, id, parentId, timestamp } = base;
  const rec: PiEntryRec = { line: raw.line, order, id, parentId, type, timestamp: timestamp ?? undefined, entry: null, parent: null, thinkingLevel: 'off', model: null, sentThinking: null, compaction: null };
  // An entry type is untrusted text: `constructor` or `__proto__` must not find a built-in.
  const schema = ownGet(ENTRY_SCHEMAS as Record<string, (typeof ENTRY_SCHEMAS)[PiEntryType]>, type);
  if (!schema) {
    bump(ignored, type);
    return rec;
  }
  // An entry that does not fit stays in the tree (its children keep their path) without content.
  const mismatch = (what: string, error: z.ZodError): PiEntryRec => {
    problems.add(raw.line, 'warning', () => `${what} does not match the Pi 0.73 schema (${describeIssues(error)}); kept as a tree node only`);
    return rec;
  };
  const parsed = schema.safeParse(raw.obj);
  if (!parsed.success) return mismatch(`${type} entry`, parsed.error);
  if (type === 'message') {
    const msg = (raw.obj as { message: Record<string, unknown> }).message;
    const role = String(msg.role);
    if (!KNOWN_ROLES.has(role)) {
      bump(ignored, `message:${role}`);
      return rec;
    }
    const m = raw.message ? { success: true as const, data: raw.message } : AgentMessageSchema.safeParse(msg);
    if (!m.success) return mismatch(`${role} message`, m.error);
    rec.entry = { type: 'message', message: m.data };
    return rec;
  }
  rec.entry = { ...(parsed.data as object), type } as PiEntry;
  return rec;
}

/**
 * Long tool-result texts as JsonLiterals (core/literal.ts): held at ~1 byte per character, and
 * shared by the request blocks built from them (the bulk of a long session's bytes). With the
 * line's bytes (`line`), a literal written there as JSON.stringify writes it is copied from them
 * (rawtext.ts) instead of serialized and encoded again: the same bytes (literalOf's), tested on
 * every tool result of the fixtures and generated sessions (test/unit/pi/raw-literals.test.ts).
 */
export function holdLiterals(m: ToolResultMessage, line?: Uint8Array): void {
  const content = m.content;
  let spans: Int32Array | null | undefined;
  for (let i = 0; i < content.length; i++) {
    const b = content[i];
    if (b.type !== 'text' || typeof b.text !== 'string' || b.text.length < LITERAL_CHARS) continue;
    if (line && spans === undefined) spans = contentTextSpans(line, content.length);
    const start = spans ? spans[2 * i] : -1;
    (b as { text: string | JsonLiteral }).text = start >= 0 ? new JsonLiteral(Buffer.from(line!.subarray(start, spans![2 * i + 1])), b.text.length) : literalOf(b.text);
  }
}

/**
 * Resolves parents and derives per-entry path facts in one pass (parents precede children in a
 * file Pi wrote). A `parentId` that names no earlier entry makes the entry a root (Pi treats
 * orphans as roots); a forward reference is refused, so the tree has no cycles. Follows Pi's
 * in-memory state (`read.process`) in file order for the level each request was sent with.
 */
function link(read: PiRead, entries: PiEntryRec[], problems: LineProblems): void {
  const { byId } = read;
  const pi = read.process;
  for (const rec of entries) {
    if (rec.parentId !== null) {
      const p = byId.get(rec.parentId);
      if (p && p.order < rec.order) {
        rec.parent = p;
        // The same value as the parent's own id string (its map key): one string per entry, not two.
        rec.parentId = p.id;
      } else {
        problems.add(
          rec.line,
          'warning',
          () => (p ? `parentId ${rec.parentId} refers to a later line (${p.line}); entry treated as a root` : `parentId ${rec.parentId} not found; entry treated as a root (its context starts here)`),
        );
      }
    }
    const e = rec.entry;
    const parent = rec.parent;
    // Appended away from the entry before it in file order: a tree navigation came before it.
    if (branchStart(rec)) pi.navigated = true;
    rec.thinkingLevel = e?.type === 'thinking_level_change' ? e.thinkingLevel : (parent?.thinkingLevel ?? 'off');
    rec.compaction = e?.type === 'compaction' ? rec : (parent?.compaction ?? null);
    const pathModel = parent?.model ?? null;
    if (e?.type === 'model_change') {
      rec.model = `${e.provider}\u0000${e.modelId}`;
      // setModel re-clamps the level and writes a thinking entry when it changes; past a model
      // change the path's level is taken again (a new process restores it too).
      pi.model = rec.model;
      pi.level = rec.thinkingLevel;
      pi.carried = false;
      pi.navigated = false;
    } else if (e?.type === 'thinking_level_change') {
      rec.model = pathModel;
      pi.level = e.thinkingLevel;
      pi.carried = false;
      pi.navigated = false;
    } else if (e?.type === 'message' && e.message.role === 'assistant') {
      const sent = `${e.message.provider}\u0000${e.message.model}`;
      rec.model = sent;
      const pathLevel = rec.thinkingLevel;
      const navigated = pi.navigated;
      pi.navigated = false;
      if (pi.carried && sent === pathModel && pathModel !== pi.model) pi.carried = false; // a new process restored the path
      else if (!pi.carried && pathLevel !== pi.level && pi.model !== null && sent === pi.model && (navigated || pathModel !== pi.model)) pi.carried = true; // navigated in-process
      rec.sentThinking = pi.carried ? pi.level : pathLevel;
      pi.level = rec.sentThinking;
      pi.model = sent;
    } else rec.model = pathModel;
  }
}
