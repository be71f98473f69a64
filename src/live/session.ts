/**
 * Live analysis of one session that is still being written: `prefix-lens analyze --watch` and
 * the extension's live tail.
 *
 * Pi sessions continue from the saved state at the last complete line (hosts/pi/live.ts: the entry
 * tree and the encoder's memoized chain tails), so an appended request costs its own lines plus
 * one pass of the judge over the request list (verdicts, live cache entries and the token model
 * are recomputed from the kept chains: the token model is a session-wide median, so a new request
 * can move earlier estimates, and the results stay exactly those of a full analysis). A rewritten
 * or truncated file is read again. Other hosts are read again when their file changes.
 */
import { statSync } from 'node:fs';
import { analyzeSession } from '../core/analyze.js';
import type { Session } from '../core/model.js';
import { defaultRules, type ProviderRules } from '../core/rules.js';
import { PiLiveSession, type LiveChange } from '../hosts/pi/live.js';
import { openRef, type SessionRef } from '../hosts/registry.js';
import { sessionReport, type RequestReport, type SessionReport } from '../report/json.js';
import { attachPhux } from '../report/phux.js';

/** What an update produced. */
export interface LiveUpdate {
  change: LiveChange;
  /** Requests that were not in the previous report (new indices), in order. */
  added: RequestReport[];
  /** Earlier requests whose verdict or expected read changed (the token model moved), in order. */
  revised: RequestReport[];
  report: SessionReport;
}

function identity(path: string): string {
  try {
    const st = statSync(path);
    let wal = '';
    try {
      const w = statSync(`${path}-wal`);
      wal = `${w.size}:${w.mtimeMs}`;
    } catch {
      // no WAL
    }
    return `${st.size}:${st.mtimeMs}:${wal}`;
  } catch {
    return 'missing';
  }
}

/** A session analyzed as it grows. */
export class LiveAnalysis {
  private pi: PiLiveSession | null = null;
  private seen = '';
  /** The current report. */
  report!: SessionReport;

  private constructor(
    readonly ref: SessionRef,
    private readonly rules: ProviderRules,
  ) {}

  /** Reads and analyzes the session. Never throws for bad content. */
  static async open(ref: SessionRef, opts: { rules?: ProviderRules } = {}): Promise<LiveAnalysis> {
    const a = new LiveAnalysis(ref, opts.rules ?? defaultRules);
    if (ref.host === 'pi') a.pi = await PiLiveSession.open(ref.path);
    a.seen = identity(ref.path);
    a.report = await a.analyze();
    return a;
  }

  private async analyze(): Promise<SessionReport> {
    const session: Session = this.pi ? this.pi.session() : (await openRef(this.ref))[0];
    return attachPhux(sessionReport(analyzeSession(session, this.rules), this.rules), session);
  }

  /** Reads what changed since the last call and judges again. */
  async update(): Promise<LiveUpdate> {
    let change: LiveChange;
    if (this.pi) change = await this.pi.update();
    else {
      const now = identity(this.ref.path);
      change = now === this.seen ? 'unchanged' : 'reset';
      this.seen = now;
    }
    if (change === 'unchanged') return { change, added: [], revised: [], report: this.report };
    const before = this.report;
    this.report = await this.analyze();
    const old = new Map(before.requests.map((r) => [r.index, r] as const));
    const added: RequestReport[] = [];
    const revised: RequestReport[] = [];
    for (const r of this.report.requests) {
      const o = old.get(r.index);
      if (!o) added.push(r);
      else if (o.verdict !== r.verdict || o.expectedRead !== r.expectedRead) revised.push(r);
    }
    return { change, added, revised, report: this.report };
  }
}
