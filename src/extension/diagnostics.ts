/**
 * Problems entries (source `Prefix Lens`) for session transcripts opened in an editor (a `.jsonl`
 * that a host recognizes by its name, place and content: Pi, Claude Code, Codex, PI-Desktop,
 * BotHarness; registry recognizeFile, in the worker): a warning on
 * the line of each request that broke the cache (causes, re-billed tokens and cost; related
 * information = the line of the request it was compared with), information for `ttl-expired` and
 * `unexplained-miss`. A hover on a request's line shows its verdict; a code action opens the
 * Timeline at that request. The analysis runs in the worker; this file only maps the report.
 */
import * as vscode from 'vscode';
import type { SessionRef } from '../hosts/registry.js';
import type { RequestReport, SessionReport } from '../report/json.js';
import { type AnalysisWorker, CancelledError } from './analysisWorker.js';
import { plural } from '../plural.js';
import { percent, tokens, usd } from './format.js';
import type { Log } from './log.js';
import { diagnosticsEnabled, ruleOverrides } from './settings.js';

export const SOURCE = 'Prefix Lens';

/**
 * Whether `doc` may be a session transcript: a `.jsonl` file on disk whose first line is a JSON
 * object. Which host's (if any) the worker decides (`diagnose`); this only spares it the rest.
 */
export function isTranscript(doc: vscode.TextDocument): boolean {
  return doc.uri.scheme === 'file' && doc.fileName.endsWith('.jsonl') && doc.lineCount > 0 && /^\s*\{/.test(doc.lineAt(0).text);
}

/** The requests of `report` whose line is in `path` (a Claude Code session also holds its sub-agents' files). */
const inFile = (report: SessionReport, path: string): RequestReport[] => report.requests.filter((q) => q.file === path);

export class TranscriptDiagnostics implements vscode.HoverProvider, vscode.CodeActionProvider, vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection('prefixLens');
  private readonly reports = new Map<string, SessionReport>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly running = new Map<string, vscode.CancellationTokenSource>();
  private readonly disposables: vscode.Disposable[] = [];
  /** `.jsonl` documents no host recognized, with the version that was checked (not asked again until it changes). */
  private readonly notTranscripts = new Map<string, number>();
  /** Resolves waiters of `analyzed(uri)`. */
  private readonly waiters = new Map<string, Array<() => void>>();

  constructor(
    private readonly worker: AnalysisWorker,
    private readonly log: Log,
  ) {
    const selector: vscode.DocumentSelector = [{ scheme: 'file', pattern: '**/*.jsonl' }];
    this.disposables.push(
      vscode.workspace.onDidOpenTextDocument((d) => this.schedule(d, 0)),
      vscode.workspace.onDidSaveTextDocument((d) => this.schedule(d, 0)),
      vscode.workspace.onDidChangeTextDocument((e) => e.contentChanges.length && this.schedule(e.document, 1000)),
      vscode.workspace.onDidCloseTextDocument((d) => this.forget(d.uri)),
      // A closed editor's document can stay open (no close event) for minutes: follow the tabs.
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        if (e.closed.length) this.forgetUnshown();
      }),
      // A transcript shown again (its document never closed) gets its entries back.
      vscode.window.onDidChangeVisibleTextEditors((eds) => {
        for (const ed of eds) {
          const k = ed.document.uri.toString();
          if (!this.reports.has(k) && this.notTranscripts.get(k) !== ed.document.version) this.schedule(ed.document, 0);
        }
      }),
      vscode.languages.registerHoverProvider(selector, this),
      vscode.languages.registerCodeActionsProvider(selector, this, { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] }),
    );
    for (const d of vscode.workspace.textDocuments) this.schedule(d, 0);
  }

  /** The last report of an opened transcript. */
  reportFor(uri: vscode.Uri): SessionReport | undefined {
    return this.reports.get(uri.toString());
  }

  /** Resolves when the next analysis of `uri` has been applied (or at once when one is applied and none runs). */
  analyzed(uri: vscode.Uri): Promise<void> {
    const k = uri.toString();
    const idle = !this.running.has(k) && !this.timers.has(k);
    if (this.reports.has(k) && idle) return Promise.resolve();
    const p = new Promise<void>((res) => this.waiters.set(k, [...(this.waiters.get(k) ?? []), res]));
    if (idle) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === k);
      if (doc && isTranscript(doc) && diagnosticsEnabled()) this.schedule(doc, 0);
      else this.resolveWaiters(k);
    }
    return p;
  }

  private resolveWaiters(k: string): void {
    for (const w of this.waiters.get(k) ?? []) w();
    this.waiters.delete(k);
  }

  /**
   * Analyzes `doc` now (commands "Diagnose Active Transcript", "Diagnose Session"); `ref`: the
   * session the caller already knows the file holds (not recognized again). Null when no host
   * recognizes it, undefined when cancelled or failed.
   */
  async diagnose(doc: vscode.TextDocument, token?: vscode.CancellationToken, ref?: SessionRef): Promise<SessionReport | null | undefined> {
    if (!isTranscript(doc)) return null;
    return this.run(doc, token, ref);
  }

  /**
   * Analyzes every transcript that has entries (or is being analyzed) again, with the rules as
   * they are now (`prefixLens.ttlSecondsOverrides` or `prefixLens.priceOverrides` changed): an
   * analysis in flight under the old rules is cancelled, the entries are replaced when done.
   */
  rejudge(): void {
    const known = new Set([...this.reports.keys(), ...this.running.keys()]);
    for (const doc of vscode.workspace.textDocuments) if (known.has(doc.uri.toString())) this.schedule(doc, 0);
  }

  private schedule(doc: vscode.TextDocument, delayMs: number): void {
    if (!diagnosticsEnabled() || !isTranscript(doc)) return;
    const k = doc.uri.toString();
    clearTimeout(this.timers.get(k));
    this.timers.set(
      k,
      setTimeout(() => {
        this.timers.delete(k);
        void this.run(doc).catch(() => undefined);
      }, delayMs),
    );
  }

  private async run(doc: vscode.TextDocument, outer?: vscode.CancellationToken, known?: SessionRef): Promise<SessionReport | null | undefined> {
    const k = doc.uri.toString();
    this.running.get(k)?.cancel();
    const cts = new vscode.CancellationTokenSource();
    outer?.onCancellationRequested(() => cts.cancel());
    this.running.set(k, cts);
    try {
      const path = doc.uri.fsPath;
      const r = await this.worker.run({ op: 'diagnose', path, ref: known, env: { ...process.env }, overrides: ruleOverrides() }, { token: cts.token, urgent: true });
      const ref = r.ref;
      if (!ref) {
        // Some other JSON Lines file: no entries, and nothing to keep for it.
        this.collection.delete(doc.uri);
        this.notTranscripts.set(k, doc.version);
        return null;
      }
      const report = r.sessions.find((s) => s.id === ref.id) ?? r.sessions[0];
      if (!report || cts.token.isCancellationRequested) return undefined;
      this.reports.set(k, report);
      this.collection.set(doc.uri, toDiagnostics(doc, report));
      this.log.info(`diagnostics for ${path}: ${plural(report.totals.breaks, 'break')} in ${plural(report.totals.requests, 'request')} (${r.ms} ms)`);
      return report;
    } catch (e) {
      if (!(e instanceof CancelledError)) this.log.warn(`diagnostics for ${doc.uri.fsPath} failed: ${(e as Error).message}`);
      if (e instanceof CancelledError && outer?.isCancellationRequested) throw e;
      return undefined;
    } finally {
      if (this.running.get(k) === cts) {
        this.running.delete(k);
        if (!this.timers.has(k)) this.resolveWaiters(k);
      }
      cts.dispose();
    }
  }

  /** Forgets every transcript no tab shows any more. */
  private forgetUnshown(): void {
    const shown = new Set<string>();
    for (const g of vscode.window.tabGroups.all) {
      for (const t of g.tabs) if (t.input instanceof vscode.TabInputText) shown.add(t.input.uri.toString());
    }
    for (const k of [...this.reports.keys()]) if (!shown.has(k)) this.forget(vscode.Uri.parse(k));
  }

  private forget(uri: vscode.Uri): void {
    const k = uri.toString();
    clearTimeout(this.timers.get(k));
    this.timers.delete(k);
    this.running.get(k)?.cancel();
    this.reports.delete(k);
    this.notTranscripts.delete(k);
    this.collection.delete(uri);
  }

  provideHover(doc: vscode.TextDocument, pos: vscode.Position): vscode.Hover | undefined {
    const report = this.reports.get(doc.uri.toString());
    const r = report && inFile(report, doc.uri.fsPath).find((q) => q.line === pos.line + 1);
    if (!report || !r) return undefined;
    const md = new vscode.MarkdownString();
    md.isTrusted = { enabledCommands: ['prefixLens.openTimeline', 'prefixLens.compareRequests'] };
    md.appendMarkdown(`**Prefix Lens** · request #${r.number}: **${r.verdict}**\n\n`);
    md.appendText(verdictLine(report, r));
    md.appendMarkdown(`\n\n[Open Timeline at this request](command:prefixLens.openTimeline?${encodeURIComponent(JSON.stringify([{ path: doc.uri.fsPath, requestIndex: r.index }]))})`);
    if (r.matched !== null) md.appendMarkdown(` · [Compare with #${r.matchedNumber}](command:prefixLens.compareRequests?${encodeURIComponent(JSON.stringify([{ path: doc.uri.fsPath, requestIndex: r.index, base: r.matched }]))})`);
    return new vscode.Hover(md, doc.lineAt(pos.line).range);
  }

  provideCodeActions(doc: vscode.TextDocument, _range: vscode.Range, ctx: vscode.CodeActionContext): vscode.CodeAction[] {
    const out: vscode.CodeAction[] = [];
    const report = this.reports.get(doc.uri.toString());
    // The context's diagnostics are copies: find the request by the diagnostic's line.
    for (const d of ctx.diagnostics) {
      const r = d.source === SOURCE && report ? inFile(report, doc.uri.fsPath).find((q) => q.line === d.range.start.line + 1) : undefined;
      if (!r) continue;
      const a = { path: doc.uri.fsPath, requestIndex: r.index };
      const act = new vscode.CodeAction('Open Timeline at this request', vscode.CodeActionKind.QuickFix);
      act.diagnostics = [d];
      act.command = { command: 'prefixLens.openTimeline', title: 'Open Timeline at this request', arguments: [{ path: a.path, requestIndex: a.requestIndex }] };
      out.push(act);
      if (r.matched !== null) {
        const cmp = new vscode.CodeAction(`Compare with request #${r.matchedNumber}`, vscode.CodeActionKind.QuickFix);
        cmp.diagnostics = [d];
        cmp.command = { command: 'prefixLens.compareRequests', title: cmp.title, arguments: [{ path: a.path, requestIndex: a.requestIndex, base: r.matched }] };
        out.push(cmp);
      }
    }
    return out;
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const c of this.running.values()) c.cancel();
    for (const d of this.disposables) d.dispose();
    this.collection.dispose();
  }
}

/** One line about a request's verdict: causes, tokens and cost it re-billed, read vs expected. */
export function verdictLine(report: SessionReport, r: RequestReport): string {
  const parts: string[] = [];
  if (r.causes.length) parts.push(r.causes.map((c) => `${c.kind}${c.detail ? ` (${c.detail})` : ''}`).join('; '));
  if (r.break) parts.push(`prefix changed at ${r.break.segment} block ${r.break.blockIndex}, ${r.break.path}, byte ${r.break.byteOffset}`);
  if (r.lostTokens > 0) parts.push(`${plural(Math.round(r.lostTokens), 'token', { shown: tokens(r.lostTokens) })} re-billed${r.costUSD !== null ? ` (${usd(r.costUSD)})` : ''}`);
  if (r.expectedRead !== null && r.observedRead !== null) parts.push(`cache read ${tokens(r.observedRead)} of ${tokens(r.expectedRead)} expected`);
  if (r.matched !== null) parts.push(`compared with request #${r.matchedNumber}`);
  if (report.totals.hitRate !== null && !parts.length) parts.push(`session hit rate ${percent(report.totals.hitRate)}`);
  return parts.join(' · ');
}

/** The Problems entries of one session report in `doc` (lines are 1-based in the report). */
export function toDiagnostics(doc: vscode.TextDocument, report: SessionReport): vscode.Diagnostic[] {
  const out: vscode.Diagnostic[] = [];
  const mine = inFile(report, doc.uri.fsPath);
  const byIndex = new Map(mine.map((q) => [q.index, q]));
  for (const r of mine) {
    if (r.line < 1 || r.line > doc.lineCount) continue;
    const severity =
      r.verdict === 'break' ? vscode.DiagnosticSeverity.Warning : r.verdict === 'ttl-expired' || r.verdict === 'unexplained-miss' ? vscode.DiagnosticSeverity.Information : undefined;
    if (severity === undefined) continue;
    const what = r.verdict === 'break' ? 'Cache break' : r.verdict === 'ttl-expired' ? 'Cache expired (TTL)' : 'Unexplained cache miss';
    const d = new vscode.Diagnostic(doc.lineAt(r.line - 1).range, `${what} at request #${r.number}: ${verdictLine(report, r)}`, severity);
    d.source = SOURCE;
    d.code = r.verdict;
    const m = r.matched !== null ? byIndex.get(r.matched) : undefined;
    if (m && m.line >= 1 && m.line <= doc.lineCount) {
      d.relatedInformation = [new vscode.DiagnosticRelatedInformation(new vscode.Location(doc.uri, doc.lineAt(m.line - 1).range), `request #${m.number}, the cache entry it was compared with`)];
    }
    out.push(d);
  }
  return out;
}
