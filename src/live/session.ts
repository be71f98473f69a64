/**
 * Live analysis of one session that is still being written: `prefix-lens analyze --watch` and
 * the extension's live tail.
 *
 * Pi sessions continue from the saved state at the last complete line (hosts/pi/live.ts: the entry
 * tree, the encoder's memoized chain tails, the requests built so far). The judge continues too:
 * its live cache entries, the token model's fit (core/analyze.ts Calibration) and the reports of
 * the earlier requests are kept, and an appended request is judged and reported alone, as long as
 * the token model did not move (it is fitted on the session's first CALIBRATION_LIMIT growth
 * ratios and points, so in a long session it no longer does). When it moved, or the earlier
 * requests were rebuilt (a new price rate, a reset), every request is judged again. Either way
 * the results are exactly those of a full analysis. A rewritten or truncated file is read again.
 * Other hosts are read again when their file changes.
 * A Codex fork (SessionRef.baseThread) reads its parent rollout's first lines: the parent as the
 * ref names it (SessionRef.basePath) is stat'ed at each update (no listing), so the parent
 * growing, rewritten, moved or removed is a change of the session too; and whenever the fork is
 * read again (its own file or its parent changed) the parent is looked for again unless it is
 * still where it was (one listing of the Codex home then: codex/locate.ts findRolloutOf), so a
 * parent that appeared, or was archived, since the watch started is read, not the stale path.
 * Captured bodies (the capture join, hosts/capturejoin.ts) are joined as in a full analysis: a Pi
 * session some of whose bodies the capture proxy saved is read in full with them (wire evidence)
 * instead of continued, and a change of the capture folders the join can look at (a body saved
 * after the transcript line it belongs to) is a change of the session too.
 */
import { statSync } from 'node:fs';
import { judgeSession, totals, type Calibration, type SessionJudge, type RequestAnalysis, type SessionAnalysis } from '../core/analyze.js';
import type { Diagnostic, Session } from '../core/model.js';
import { defaultRules, type ProviderRules } from '../core/rules.js';
import { PiLiveSession, type LiveChange } from '../hosts/pi/live.js';
import { captureRoots, captureStamp, headStartMs } from '../hosts/capturejoin.js';
import { peekFile } from '../hosts/peek.js';
import { dbStamp } from '../hosts/sqlite.js';
import { findRolloutOf } from '../hosts/codex/locate.js';
import { checkSessionNumbers } from '../hosts/numbers.js';
import { CAPTURE_JOINED, openRef, withCapturedBodies, type SessionRef } from '../hosts/registry.js';
import { diagnosticReport, keepsRequestReports, requestReport, sessionReport, type DiagnosticReport, type RequestReport, type SessionReport } from '../report/json.js';
import { attachPhux } from '../report/phux.js';

/** What an update produced. */
export interface LiveUpdate {
  change: LiveChange;
  /** Requests that were not in the previous report (new indices), in order. */
  added: RequestReport[];
  /** Earlier requests whose verdict or expected read changed (the token model moved), in order. */
  revised: RequestReport[];
  /**
   * Diagnostics the previous report did not have (those of appended lines), in the report's
   * order; empty after a reset (the report holds them all). A half-written last line's is not
   * among them until its newline is there (then, if it still does not parse).
   */
  diagnostics: DiagnosticReport[];
  /** True when only the appended requests were judged (the earlier ones kept, see the module comment). */
  continued: boolean;
  /** What happened to the file when `change` is `reset` (the session was read again), else null. */
  cause: ResetCause | null;
  /**
   * The session's report as of the latest update of its LiveAnalysis. After an append judged
   * alone it is built when first read (the session's sums, models and context stream are O(requests));
   * `added` does not wait for it.
   */
  readonly report: SessionReport;
}

/**
 * What happened to a session's file that made a live analysis read it again, from its stat at the
 * previous read and now (`from`/`to`: sizes in bytes, null when there was no file):
 * `deleted` (no file now), `created` (none before), `replaced` (another file at the path: other
 * device or inode), `truncated` (shorter), `grew` (longer, but not continued: a host read in full
 * at every change, or a Pi append that cannot be continued), `rewritten` (same size, other bytes
 * or times), `changed` (a database: its rows or WAL changed).
 */
export interface ResetCause {
  /** `parent`: the file is unchanged, the parent rollout a Codex fork reads changed (grew, rewritten, moved, removed). */
  kind: 'deleted' | 'created' | 'replaced' | 'truncated' | 'grew' | 'rewritten' | 'changed' | 'parent';
  from: number | null;
  to: number | null;
}

/** The stat of a session's file that ResetCause is told from; null when it cannot be stat'ed (gone). */
interface FileFacts {
  dev: number;
  ino: number;
  size: number;
}

function factsOf(path: string): FileFacts | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino, size: st.size };
  } catch {
    return null;
  }
}

/** What happened between two stats of a file that was read again (`database`: the ref is a database, e.g. OpenCode's). */
export function resetCause(before: FileFacts | null, now: FileFacts | null, database: boolean): ResetCause {
  const cause = (kind: ResetCause['kind']): ResetCause => ({ kind, from: before?.size ?? null, to: now?.size ?? null });
  if (!now) return cause('deleted');
  if (!before) return cause('created');
  if (before.dev !== now.dev || before.ino !== now.ino) return cause('replaced');
  if (database) return cause('changed');
  if (now.size < before.size) return cause('truncated');
  if (now.size > before.size) return cause('grew');
  return cause('rewritten');
}

/**
 * The diagnostics of `now` that `before` did not have (as many times as `now` has them more
 * often), in `now`'s order, as the report gives them: what an update adds (the readers append a
 * phase's diagnostics as they read on; a phase's summary of its counted lines changes as it
 * counts more, and is then new too). O(diagnostics): each phase keeps MAX_DIAGNOSTICS at most.
 */
export function newDiagnostics(before: readonly Diagnostic[], now: readonly Diagnostic[]): DiagnosticReport[] {
  const key = (d: Diagnostic) => `${d.severity}\0${d.file}\0${d.line}\0${d.message}`;
  const seen = new Map<string, number>();
  for (const d of before) seen.set(key(d), (seen.get(key(d)) ?? 0) + 1);
  const out: DiagnosticReport[] = [];
  for (const d of now) {
    const k = key(d);
    const left = seen.get(k) ?? 0;
    if (left > 0) seen.set(k, left - 1);
    else out.push(diagnosticReport(d));
  }
  return out;
}

/** The file's (and its WAL's) size and mtime, `missing` when it is gone (hosts/sqlite.ts dbStamp). */
function identity(path: string): string {
  return dbStamp(path) ?? 'missing';
}

/** True for a Codex fork, whose parent rollout (SessionRef.basePath) is part of what is read. */
const isFork = (ref: SessionRef): ref is SessionRef & { baseThread: string } => ref.host === 'codex' && typeof ref.baseThread === 'string';

/**
 * A fork's parent rollout as the ref names it, by one stat (never a search): `<path>:<size>:<mtime>`,
 * `<path>:gone` when no file is there, `none` when none was found; '' for any other ref.
 */
function parentIdentity(ref: SessionRef): string {
  if (!isFork(ref)) return '';
  if (typeof ref.basePath !== 'string') return 'none';
  try {
    const st = statSync(ref.basePath);
    return st.isFile() ? `${ref.basePath}:${st.size}:${st.mtimeMs}` : `${ref.basePath}:gone`;
  } catch {
    return `${ref.basePath}:gone`;
  }
}

/** The first timestamp in a regular file's first 64 KiB (capturejoin.ts headStartMs), or null. */
async function headStart(path: string): Promise<number | null> {
  const p = await peekFile(path, 64 * 1024);
  return p ? headStartMs(Buffer.from(p.lines.head.join('\n'), 'utf8')) : null;
}

/**
 * Size from which a Pi session's last line is held back at open to warm the continued path (a
 * smaller session's first append is cheap anyway; below the calibration limit the held-back line
 * may re-judge everything, which is also cheap there).
 */
export const WARM_UP_BYTES = 4 * 1024 * 1024;

/** What the live analysis keeps to continue (Pi): the judge after the requests pushed, the fit over them. */
interface JudgeState {
  judge: SessionJudge;
  calibration: Calibration;
  /** No persona and no system shape so far: request entries are built alone and kept (report/json.ts keepsRequestReports). */
  plain: boolean;
}

/** What the current report is made of; `report` once built. */
interface Current {
  session: Session;
  /** The judged requests (a snapshot: the judge's list grows with later appends). */
  requests: RequestAnalysis[];
  tokenModel: SessionAnalysis['tokenModel'];
  report: SessionReport | null;
}

/** A session analyzed as it grows. */
export class LiveAnalysis {
  private pi: PiLiveSession | null = null;
  private seen = '';
  /** A Codex fork's parent at the last read (parentIdentity). */
  private parentSeen = '';
  /** The file's stat at the last read (what a reset is told from). */
  private facts: FileFacts | null = null;
  /** The capture folders' stamp at the last analysis (null: none the join could look at). */
  private captures: string | null = null;
  /** Session start for the capture stamp: the file head's first timestamp, or the ref's (OpenCode). */
  private startMs: number | null = null;
  private state: JudgeState | null = null;
  private current!: Current;
  /** Entries of the current report's requests, in order (an append judged alone pushes its own). */
  private requestReports: RequestReport[] = [];

  /**
   * @param ref the analysis's own copy of the caller's ref (a Codex fork's basePath is looked
   *   for again as the watch goes on: the caller's listing is not changed)
   */
  private constructor(
    readonly ref: SessionRef,
    private readonly rules: ProviderRules,
    private readonly calibrationLimit: number | undefined,
  ) {}

  /**
   * Reads and analyzes the session. Never throws for bad content.
   * A Pi session of at least `warmUpBytes` (default WARM_UP_BYTES) is read without its last line,
   * which then goes through the continued path as an append would: the first real append no longer
   * pays for that code's first run (~20 ms on the 100 MiB bench session). Same results either way.
   * @param opts.calibrationLimit as analyzeSession's (tests use a small one to reach the continued judge quickly)
   */
  static async open(ref: SessionRef, opts: { rules?: ProviderRules; calibrationLimit?: number; warmUpBytes?: number } = {}): Promise<LiveAnalysis> {
    const a = new LiveAnalysis({ ...ref }, opts.rules ?? defaultRules, opts.calibrationLimit);
    let warmUp = false;
    if (ref.host === 'pi') {
      try {
        warmUp = statSync(ref.path).size >= (opts.warmUpBytes ?? WARM_UP_BYTES);
      } catch {
        // unreadable: the reader says so
      }
      a.pi = await PiLiveSession.open(ref.path, { holdBackLast: warmUp });
    }
    a.seen = identity(ref.path);
    // A fork whose parent was not looked for (a ref made outside discovery): looked for once now.
    if (isFork(a.ref) && a.ref.basePath === undefined) await a.findParent();
    a.parentSeen = parentIdentity(a.ref);
    a.facts = factsOf(ref.path);
    a.startMs = ref.startMs ?? (CAPTURE_JOINED.has(ref.host) ? await headStart(ref.path) : null);
    a.captures = await a.captureStamp();
    await a.analyze();
    if (warmUp) await a.update();
    return a;
  }

  /** The current report (built on first read after an append judged alone). */
  get report(): SessionReport {
    const c = this.current;
    if (!c.report) {
      const a: SessionAnalysis = { session: c.session, requests: c.requests, tokenModel: c.tokenModel, totals: totals(c.requests) };
      c.report = attachPhux(sessionReport(a, this.rules, this.requestReports), c.session);
    }
    return c.report;
  }

  /** The session as last read: its requests with their prefix chains (what the extension's request diff renders). */
  get session(): Session {
    return this.current.session;
  }

  /** The current session's diagnostics but a half-written last line's (PiLiveSession.pendingDiagnostic). */
  private get landed(): Diagnostic[] {
    const pending = this.pi?.pendingDiagnostic ?? null;
    const all = this.current.session.diagnostics;
    return pending ? all.filter((d) => d !== pending) : all;
  }

  /** The session's id as its host names it (the report's `id`), without building the report. */
  get sessionId(): string {
    return this.current.session.id;
  }

  /** The session's file as the report names it (`path`), without building the report. */
  get sessionPath(): string {
    return this.current.session.path;
  }

  /**
   * Looks for a Codex fork's parent rollout again (SessionRef.basePath of this analysis's ref)
   * unless it is still a file where it was: one listing of the Codex home (findRolloutOf) when it
   * was none, or is gone (moved, archived, removed).
   */
  private async findParent(): Promise<void> {
    const ref = this.ref;
    if (!isFork(ref)) return;
    if (typeof ref.basePath === 'string' && parentIdentity(ref) !== `${ref.basePath}:gone`) return;
    ref.basePath = await findRolloutOf(ref.path, ref.baseThread);
  }

  /** The stamp of the capture folders the join can look at for this session (capturejoin.ts captureStamp). */
  private async captureStamp(): Promise<string | null> {
    if (!CAPTURE_JOINED.has(this.ref.host)) return null;
    const roots = captureRoots(process.env);
    if (!roots.length) return null;
    let mtimeMs = this.ref.mtimeMs;
    try {
      mtimeMs = Math.max(mtimeMs, statSync(this.ref.path).mtimeMs);
    } catch {
      // gone: the ref's time
    }
    return captureStamp(this.ref.id, mtimeMs, roots, this.ref.parentId, this.startMs);
  }

  /**
   * Analyzes the session as it is now. `continued`: only the requests after the previous
   * report's were judged. @returns the entries of the requests the previous report did not have
   * when continued, else null (everything was judged and reported again)
   */
  private async analyze(): Promise<{ continued: boolean; added: RequestReport[] | null }> {
    let session: Session = this.pi ? this.pi.session() : (await openRef(this.ref))[0];
    // A Pi session with captured bodies: read in full with them (openRef joins), not continued.
    let joined = false;
    const withBodies = this.pi && this.captures !== null ? await withCapturedBodies(this.ref, [session]) : null;
    if (withBodies) {
      session = checkSessionNumbers(withBodies[0]);
      joined = true;
    }
    const st = this.state;
    if (this.pi && !joined && st && this.pi.kept === st.judge.requests.length) {
      const appended = session.requests.slice(st.judge.requests.length);
      let moved = false;
      for (const r of appended) if (st.calibration.add(r)) moved = true;
      if (!moved || st.judge.adoptTokenModel(st.calibration.model())) {
        for (const r of appended) st.judge.push(r);
        const requests = [...st.judge.requests];
        st.plain = st.plain && !session.persona && !appended.some((r) => r.systemShape);
        this.current = { session, requests, tokenModel: st.judge.tokenModel, report: null };
        if (st.plain) {
          // Each appended request's entry alone; the session's sums wait until the report is read.
          const added: RequestReport[] = [];
          for (let i = this.requestReports.length; i < requests.length; i++) added.push(requestReport(this.current, requests[i]));
          this.requestReports.push(...added);
          return { continued: true, added };
        }
        const from = this.requestReports.length;
        this.requestReports = [...this.report.requests];
        return { continued: true, added: this.requestReports.slice(from) };
      }
    }
    // As analyzeSession does, keeping the judge and the fit to continue.
    const { analysis: a, calibration, judge } = judgeSession(session, this.rules, { calibrationLimit: this.calibrationLimit });
    this.state = this.pi && !joined ? { judge, calibration, plain: keepsRequestReports(session, judge.requests) } : null;
    const report = attachPhux(sessionReport(a, this.rules), session);
    this.current = { session, requests: [...judge.requests], tokenModel: judge.tokenModel, report };
    this.requestReports = [...report.requests];
    return { continued: false, added: null };
  }

  /** Reads what changed since the last call and judges again (only what was appended, when it can). */
  async update(): Promise<LiveUpdate> {
    let change: LiveChange;
    let parentOnly = false;
    if (this.pi) change = await this.pi.update();
    else {
      const now = identity(this.ref.path);
      const parent = parentIdentity(this.ref);
      change = now === this.seen && parent === this.parentSeen ? 'unchanged' : 'reset';
      parentOnly = now === this.seen && parent !== this.parentSeen;
      this.seen = now;
      // Read again: a fork's parent is looked for again first (unless it is still where it was).
      if (change === 'reset' && isFork(this.ref)) await this.findParent();
      this.parentSeen = parentIdentity(this.ref);
    }
    const captures = await this.captureStamp();
    if (captures !== this.captures && change === 'unchanged') change = 'appended';
    this.captures = captures;
    const self = this;
    const result = (u: Omit<LiveUpdate, 'report'>): LiveUpdate => ({
      ...u,
      get report() {
        return self.report;
      },
    });
    // Stat'ed only when the file changed (an unchanged file has the facts of the last read).
    let cause: ResetCause | null = null;
    if (change !== 'unchanged') {
      const facts = factsOf(this.ref.path);
      if (change === 'reset') cause = parentOnly ? { kind: 'parent', from: facts?.size ?? null, to: facts?.size ?? null } : resetCause(this.facts, facts, this.ref.stamp !== undefined && !this.pi);
      this.facts = facts;
    }
    if (change === 'unchanged') return result({ change, added: [], revised: [], diagnostics: [], continued: true, cause });
    const before = this.requestReports;
    const landedBefore = this.landed;
    const { continued, added } = await this.analyze();
    const diagnostics = change === 'reset' ? [] : newDiagnostics(landedBefore, this.landed);
    if (added) return result({ change, added, revised: [], diagnostics, continued, cause });
    const old = new Map(before.map((r) => [r.index, r] as const));
    const fresh: RequestReport[] = [];
    const revised: RequestReport[] = [];
    for (const r of this.requestReports) {
      const o = old.get(r.index);
      if (!o) fresh.push(r);
      else if (o.verdict !== r.verdict || o.expectedRead !== r.expectedRead) revised.push(r);
    }
    return result({ change, added: fresh, revised, diagnostics, continued, cause });
  }
}
