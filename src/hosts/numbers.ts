/**
 * The numeric boundary of every host reader: times and token counts read from a host's files are
 * untrusted numbers. A time outside the range a JavaScript Date can hold (±8.64e15 ms around the
 * epoch, ECMA-262 §21.4.1.1), a token count that is not a non-negative integer of at most
 * `MAX_TOKENS`, or a price or cost that is not a finite non-negative number up to `MAX_USD` would
 * crash the report (`toISOString` throws) or turn into `Infinity`/`NaN` (`null` in `--json`).
 * Such a value becomes unknown (`null`) with a warning at the record's file and line (or row); the
 * request itself, and the rest of the session, are analyzed as usual. Two steps: each reader checks
 * the host's own fields of a record before its schema (checkHostValues: the value named as the
 * host wrote it), and checkSessionNumbers checks what the reader made of them (LlmRequest times,
 * usage, prices).
 */
import { z } from 'zod';
import type { Diagnostic, LlmRequest, Session, Usage } from '../core/model.js';
import { plural } from '../plural.js';

/**
 * The zod schema of a required token count, cost or time (ms) field of a host record, after
 * checkHostValues: a number, or null where the host's value was not one (unknown). A field the
 * reader does not check still fails its line on a string, as before.
 */
export const hostNumber = z.number().nullable();

/** hostNumber for an optional field: absent stays absent (undefined). */
export const optionalHostNumber = z.number().nullish();

/** An ISO time string field after checkHostValues: a string, null where it was not a time, or absent. */
export const hostIsoTime = z.string().nullish();

/**
 * What a checked field of a host record must hold: `count` a token count (validTokens), `usd` a
 * cost in USD (a finite non-negative number ≤ MAX_COST_USD), `ms` a time in ms since epoch
 * (validTimeMs), `iso` a date string Date.parse reads as such a time.
 */
export type ValueKind = 'count' | 'usd' | 'ms' | 'iso';
/** The checked fields of a host record by key; a nested spec checks the fields of an object value. */
export interface ValueSpec {
  readonly [key: string]: ValueKind | ValueSpec;
}

/** Largest |ms| a Date holds (ECMA-262 §21.4.1.1 "Time Values and Time Range"). */
export const MAX_TIME_MS = 8.64e15;
/** Largest token count taken as real, per field of one request: far above any context window (10^12 tokens). */
export const MAX_TOKENS = 1e12;
/** Largest price taken as real, USD per million tokens. */
export const MAX_USD = 1e9;

/** Largest cost of one request taken as real, USD. */
export const MAX_COST_USD = 1e9;

/** What a token count must be, as a diagnostic words it (validTokens). */
export const COUNT_RULE = `a non-negative integer ≤ ${MAX_TOKENS}`;

/** What each kind must hold, as the diagnostic words it. */
const RULES: Record<ValueKind, string> = {
  count: `is not a token count (${COUNT_RULE})`,
  usd: `is not a cost in USD (a finite non-negative number ≤ ${MAX_COST_USD})`,
  // MAX_TIME_MS, written as people read it.
  ms: 'is not a time (ms since epoch, at most 8.64e15 from it)',
  iso: 'is not a time (a date string)',
};

function fits(kind: ValueKind, v: unknown): boolean {
  switch (kind) {
    case 'count':
      return validTokens(v);
    case 'usd':
      return validUsd(v, MAX_COST_USD);
    case 'ms':
      return validTimeMs(v);
    case 'iso':
      return typeof v === 'string' && validTimeMs(Date.parse(v));
  }
}

/** A host value as a short text for a message (JSON; Infinity and NaN as such; long strings cut). */
export function shownValue(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The boundary check of the token counts, costs and times of one host record (a JSON line, a
 * row's JSON), in place, before its schema: every field `spec` names that is present and does not
 * hold what its kind needs (a string "12", null, a boolean, an object, a negative number, 1e400 =
 * Infinity after JSON.parse, a count above MAX_TOKENS, a malformed date) is set to null, which the
 * schemas accept as unknown (hostNumber, hostIsoTime): the record, and its request, are still
 * read; the reader takes the field as unknown (a usage field null, never 0; a time unknown). A
 * nested spec is applied to an object value only (anything else is left to the schema).
 * @param at the path of `obj` in the record (`message.usage`), for the problems' names
 * @param out where each problem is appended: `<path> <value as JSON> is not …`
 */
export function checkHostValues(obj: unknown, spec: ValueSpec, at: string, out: string[]): void {
  if (!isRecord(obj)) return;
  for (const key in spec) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    const kind = spec[key];
    const v = obj[key];
    const path = at ? `${at}.${key}` : key;
    if (typeof kind === 'object') checkHostValues(v, kind, path, out);
    else if (v !== undefined && !fits(kind, v)) {
      out.push(`${path} ${shownValue(v)} ${RULES[kind]}`);
      obj[key] = null;
    }
  }
}

/**
 * A checked count where the host may leave it out: `absent` (default 0) when the field is absent,
 * else the value (null stays null: unknown, never 0). Use this, not `??`, which would take a bad
 * value's null for an absent field.
 */
export function countOr(v: number | null | undefined, absent = 0): number | null {
  return v === undefined ? absent : v;
}

/** a − b − …, or null when any is null (an unknown count makes what is derived from it unknown). */
export function minusKnown(a: number | null, ...b: Array<number | null>): number | null {
  if (a === null) return null;
  let r = a;
  for (const x of b) {
    if (x === null) return null;
    r -= x;
  }
  return r;
}

/**
 * checkHostValues without its problems, for a look at a record whose reader reports them
 * (discovery's peek at a header): `obj` itself, checked in place.
 */
export function withHostValues<T>(obj: T, spec: ValueSpec): T {
  checkHostValues(obj, spec, '', []);
  return obj;
}

/** The message of a record's checkHostValues problems. */
export function hostValuesMessage(problems: readonly string[]): string {
  return `values taken as unknown: ${problems.join('; ')}`;
}

/** The one warning of a record's checkHostValues problems, at its file and line. */
export function hostValuesWarning(file: string, line: number, problems: readonly string[]): Diagnostic {
  return { file, line, severity: 'warning', message: hostValuesMessage(problems) };
}

/** True for ms since epoch that a Date can hold. */
export function validTimeMs(ms: unknown): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && Math.abs(ms) <= MAX_TIME_MS;
}

/** True for a token count: a non-negative integer ≤ MAX_TOKENS. */
export function validTokens(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_TOKENS;
}

/** True for an amount in USD: a finite non-negative number ≤ `max` (MAX_USD per million tokens, MAX_COST_USD per request). */
export function validUsd(v: unknown, max: number): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max;
}

function where(r: LlmRequest): Pick<Diagnostic, 'file' | 'line'> & { prefix: string } {
  return { file: r.source.file, line: r.source.line, prefix: r.source.row ? `row ${r.source.row}: ` : '' };
}

/**
 * The boundary check of a read session, in place: bad times become null, a usage count that is
 * not a token count (a reader's sum or difference of the host's counts) becomes null (unknown,
 * that field only), bad prices are dropped, each with one warning; then the diagnostics are
 * folded past `MAX_DIAGNOSTICS` (foldDiagnostics).
 * @returns the session (same object)
 */
export function checkSessionNumbers(session: Session): Session {
  checkNumbers(session);
  return foldDiagnostics(session);
}

function checkNumbers(session: Session): void {
  for (const r of session.requests) {
    const w = where(r);
    const warn = (message: string) => session.diagnostics.push({ file: w.file, line: w.line, severity: 'warning', message: `${w.prefix}${message}` });
    if (r.timeMs !== null && !validTimeMs(r.timeMs)) {
      warn(`request time ${String(r.timeMs)} ms is outside the range of a date; time unknown`);
      r.timeMs = null;
    }
    if (r.usage) {
      // null: unknown already (the reader's checkHostValues named it at its line).
      const u = r.usage;
      const bad = (Object.keys(u) as Array<keyof Usage>).filter((k) => u[k] !== null && !validTokens(u[k]));
      if (bad.length) {
        warn(`usage ${bad.map((k) => `${k} ${String(u[k])}`).join(', ')} ${bad.length === 1 ? 'is not a token count' : 'are not token counts'} (${COUNT_RULE}); ${bad.join(', ')} unknown`);
        for (const k of bad) u[k] = null;
      }
    }
    if (r.prices) {
      const p = r.prices;
      const bad = Object.entries(p).filter(([, v]) => !validUsd(v, MAX_USD));
      if (bad.length) {
        warn(`price ${bad.map(([k, v]) => `${k} ${String(v)}`).join(', ')} USD per million tokens is out of range; prices from the bundled table`);
        delete r.prices;
      }
    }
  }
  for (const e of session.events) {
    if (e.timeMs !== null && !validTimeMs(e.timeMs)) {
      session.diagnostics.push({ file: session.path, line: e.line, severity: 'warning', message: `${e.kind} event time ${String(e.timeMs)} ms is outside the range of a date; time unknown` });
      e.timeMs = null;
    }
  }
}

/** Diagnostics listed one by one per session; the rest are folded into one summary per file. */
export const MAX_DIAGNOSTICS = 1000;

/** `lines 5–9`, or `line 7` when the range is one line. */
const lineRange = (first: number, last: number): string => (first === last ? `line ${first}` : `lines ${first}–${last}`);

/**
 * Keeps the first `max` diagnostics of a session; every later one is counted in one summary
 * diagnostic per file (severity = the worst folded), so that a file of a million bad lines gives a
 * report of bounded size. A reader's summary of lines it only counted (LineProblems) counts as
 * those lines. The summary's range is where the folded problems are: those after the last listed
 * line of the file (the summary's line is their first), and, named apart, those at lines among
 * the listed ones (a reader's diagnostic of the whole file at line 1 that comes after its line
 * diagnostics, another kind's diagnostics between the lines of the listed kind): "6841 more
 * problems in this file, lines 1003–7873 and 1 at line 1 among the listed lines" (it read
 * "lines 1–7873", as if the listed lines were among them). Modifies `session.diagnostics` in place.
 */
export function foldDiagnostics(session: Session, max = MAX_DIAGNOSTICS): Session {
  const all = session.diagnostics;
  if (all.length <= max) return session;
  const rank = { info: 0, warning: 1, error: 2 } as const;
  // The last listed line of each file: a folded problem at or before it is among the listed lines.
  const lastListed = new Map<string, number>();
  for (let i = 0; i < max; i++) lastListed.set(all[i].file, Math.max(lastListed.get(all[i].file) ?? 0, all[i].line));
  type Span = { first: number; last: number; count: number };
  const folded = new Map<string, { later: Span | null; among: Span | null; severity: Diagnostic['severity'] }>();
  const widen = (s: Span | null, first: number, last: number, count: number): Span =>
    s ? { first: Math.min(s.first, first), last: Math.max(s.last, last), count: s.count + count } : { first, last, count };
  for (let i = max; i < all.length; i++) {
    const d = all[i];
    // A reader's summary of lines it only counted (LineProblems) folds as the lines it stands for.
    const count = d.counted?.lines ?? 1;
    const last = d.counted?.last ?? d.line;
    let f = folded.get(d.file);
    if (!f) folded.set(d.file, (f = { later: null, among: null, severity: d.severity }));
    else if (rank[d.severity] > rank[f.severity]) f.severity = d.severity;
    if (d.line > (lastListed.get(d.file) ?? 0)) f.later = widen(f.later, d.line, last, count);
    else f.among = widen(f.among, d.line, last, count);
  }
  all.length = max;
  for (const [file, f] of folded) {
    const count = (f.later?.count ?? 0) + (f.among?.count ?? 0);
    const among = f.among ? `${f.later ? ` and ${f.among.count}` : ''} at ${lineRange(f.among.first, f.among.last)} among the listed lines` : '';
    all.push({
      file,
      line: (f.later ?? f.among!).first,
      severity: f.severity,
      message: `${plural(count, 'more problem')} in this file, ${f.later ? lineRange(f.later.first, f.later.last) : ''}${f.later ? among : among.slice(1)}, not listed one by one (the first ${max} diagnostics of the session are)`,
    });
  }
  return session;
}

/**
 * A reader's diagnostics of one file's bad lines, bounded: the first `max` (default
 * MAX_DIAGNOSTICS) are pushed to `out` one by one; later ones are only counted, without building
 * their message or object, and `close()` pushes one summary for them (at the first counted line,
 * severity the worst counted, `counted` set), which foldDiagnostics folds as the lines it stands
 * for: a session's report is the same as if every diagnostic had been built and then folded.
 * A reader that keeps its diagnostics apart by kind and goes on reading (the Pi live reader) gives
 * `out` to one LineProblems alone and takes its list with `withSummary()` instead of `close()`.
 */
export class LineProblems {
  private listed = 0;
  private count = 0;
  private first = 0;
  private last = 0;
  private severity: Diagnostic['severity'] = 'info';

  constructor(
    private readonly out: Diagnostic[],
    private readonly file: string,
    private readonly max = MAX_DIAGNOSTICS,
  ) {}

  /**
   * Problems that continue the list `withSummary` gave (e.g. saved in the Pi reader's tail state):
   * its diagnostics listed again in a new array, a last one with `counted` taken back as the count
   * of lines it stands for, so that later lines are listed or counted as if read in one go.
   */
  static resume(saved: readonly Diagnostic[], file: string, max = MAX_DIAGNOSTICS): LineProblems {
    const summary = saved.length > 0 ? saved[saved.length - 1] : undefined;
    const listed = summary?.counted ? saved.slice(0, -1) : saved.slice();
    const p = new LineProblems(listed, file, max);
    p.listed = listed.length;
    if (summary?.counted) {
      p.count = summary.counted.lines;
      p.first = summary.line;
      p.last = summary.counted.last;
      p.severity = summary.severity;
    }
    return p;
  }

  /** True while diagnostics are still listed one by one: a costly message is only worth building then. */
  get listing(): boolean {
    return this.listed < this.max;
  }

  /** A bad line's diagnostic; `message` may be a function, called only while listing. */
  add(line: number, severity: Diagnostic['severity'], message: string | (() => string)): void {
    if (this.listing) {
      this.listed++;
      this.out.push({ file: this.file, line, severity, message: typeof message === 'string' ? message : message() });
      return;
    }
    if (this.count === 0 || line < this.first) this.first = line;
    if (this.count === 0 || line > this.last) this.last = line;
    this.count++;
    if (RANK[severity] > RANK[this.severity]) this.severity = severity;
  }

  /** A diagnostic built already (a parse failure, a line's warnings) about a line of this file: as `add` of its line, severity and message. */
  push(d: Diagnostic): void {
    this.add(d.line, d.severity, d.message);
  }

  /** The summary of the lines counted so far ("N more bad lines not listed, lines a–b", "1 more bad line not listed, line a"), or null when none was. */
  summary(): Diagnostic | null {
    if (this.count === 0) return null;
    return {
      file: this.file,
      line: this.first,
      severity: this.severity,
      message: `${plural(this.count, 'more bad line')} not listed, ${lineRange(this.first, this.last)} (the first ${this.max} of this file are)`,
      counted: { lines: this.count, last: this.last },
    };
  }

  /** The listed diagnostics (when `out` holds only them), then the summary if any: a new array; reading can go on. */
  withSummary(): Diagnostic[] {
    const s = this.summary();
    return s ? [...this.out, s] : this.out.slice();
  }

  /** Pushes the summary of the counted lines, if any; once, after the file. */
  close(): void {
    const s = this.summary();
    if (s) this.out.push(s);
    this.count = 0;
  }
}

const RANK = { info: 0, warning: 1, error: 2 } as const;
