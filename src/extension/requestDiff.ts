/**
 * "Compare with Matched Request": two requests of a session side by side in VS Code's diff editor
 * (read-only virtual documents of scheme `prefix-lens-request`, rendered in the worker by
 * report/requestText.ts), the later one's cursor on the line of its first changed byte, the tab
 * titled by report/requestText.ts `comparisonLine` (the judge's verdict, and where the prefixes
 * first differ). A document's URI names what it shows (session, requests, their prefix hashes), so
 * one VS Code asks for again (a diff tab restored after a reload) is rendered again.
 */
import * as vscode from 'vscode';
import type { SessionRef } from '../hosts/registry.js';
import type { SessionReport } from '../report/json.js';
import { numberAt } from '../report/numbers.js';
import { comparisonLine } from '../report/requestText.js';
import { type AnalysisWorker } from './analysisWorker.js';
import type { RequestComparisonText } from './workerProtocol.js';

export const REQUEST_SCHEME = 'prefix-lens-request';

/** What a document URI's query names: the session (by registry key and file), the pair, and which side this document is. */
interface DocQuery {
  key: string;
  path: string;
  sessionId: string;
  /** Send-order indices of the pair in the report. */
  base: number;
  index: number;
  /** Their request numbers (core/numbering.ts), for words; absent in URIs of older builds. */
  numbers?: { base: string; index: string };
  hashes: { base: string | null; index: string | null };
  side: 'base' | 'request';
}

/** How many rendered comparisons are kept for VS Code to read again without the worker. */
const KEPT = 8;

export class RequestDiff implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly rendered = new Map<string, Promise<RequestComparisonText>>();
  private readonly registration: vscode.Disposable;

  /** @param find the session a document's query names (listed, or recognized by its file), undefined when it is gone */
  constructor(
    private readonly worker: AnalysisWorker,
    private readonly find: (key: string, path: string) => Promise<SessionRef | undefined>,
  ) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(REQUEST_SCHEME, this);
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    let q: DocQuery;
    try {
      q = JSON.parse(uri.query) as DocQuery;
    } catch {
      return 'Not a Prefix Lens request document.\n';
    }
    try {
      const c = await this.render(q, token);
      return q.side === 'base' ? c.base.text : c.request.text;
    } catch (e) {
      return `Prefix Lens cannot show request #${q.side === 'base' ? (q.numbers?.base ?? q.base) : (q.numbers?.index ?? q.index)} of ${q.sessionId} any more: ${(e as Error).message}\n`;
    }
  }

  /** The comparison a query names, rendered once per pair (both documents come from one job). */
  private render(q: DocQuery, token?: vscode.CancellationToken): Promise<RequestComparisonText> {
    const id = JSON.stringify([q.key, q.sessionId, q.base, q.index, q.hashes]);
    let p = this.rendered.get(id);
    if (!p) {
      p = (async () => {
        const ref = await this.find(q.key, q.path);
        if (!ref) throw new Error(`${q.path} is not a session any more`);
        const r = await this.worker.run({ op: 'compare', ref, sessionId: q.sessionId, base: q.base, index: q.index, ...(q.numbers ? { numbers: q.numbers } : {}), hashes: q.hashes, env: { ...process.env } }, { urgent: true, token });
        return r.comparison;
      })();
      this.rendered.set(id, p);
      // A failed or cancelled job is not kept; the oldest rendering goes first (a Map keeps insertion order).
      p.catch(() => this.rendered.delete(id));
      while (this.rendered.size > KEPT) this.rendered.delete(this.rendered.keys().next().value!);
    }
    return p;
  }

  /**
   * Renders requests `base` and `index` of `report`'s session (read from `ref`) and opens them in
   * a diff editor. Returns what the worker rendered and the tab's title.
   * @throws Error when the worker cannot read the session or either request, or they changed since `report`
   * @throws CancelledError when `token` is cancelled first
   */
  async open(ref: SessionRef, report: SessionReport, base: number, index: number, token?: vscode.CancellationToken): Promise<RequestComparisonText & { title: string }> {
    const at = (i: number) => report.requests.find((r) => r.index === i);
    const [b, r] = [at(base), at(index)];
    if (!b || !r) throw new Error(`request #${!b ? numberAt(report.requests, base) : numberAt(report.requests, index)} is not in ${report.title ?? report.id}`);
    const q = { key: ref.key, path: ref.path, sessionId: report.id, base, index, numbers: { base: b.number, index: r.number }, hashes: { base: b.prefixHash, index: r.prefixHash } };
    const c = await this.render({ ...q, side: 'request' }, token);
    // The verdict is about the comparison the judge made: shown when `base` is the request it compared with.
    const title = comparisonLine(report.title ?? report.id, b.number, r.number, c.difference, r.matched === base ? { verdict: r.verdict, causes: r.causes.map((x) => x.kind), breakSegment: r.break?.segment ?? null } : undefined);
    const uri = (side: DocQuery['side']) => vscode.Uri.from({ scheme: REQUEST_SCHEME, path: `/${report.host}/${report.id}/request-${side === 'base' ? b.number : r.number}.txt`, query: JSON.stringify({ ...q, side }) });
    const pos = c.request.changeAt;
    // The cursor goes to the start of the changed line (the diff marks the characters): a reveal
    // of a far column would scroll the narrow side-by-side editor past the line's start.
    const selection = pos ? new vscode.Range(pos.line, 0, pos.line, 0) : undefined;
    await vscode.commands.executeCommand('vscode.diff', uri('base'), uri('request'), title, { preview: true, ...(selection ? { selection } : {}) });
    return { ...c, title };
  }

  dispose(): void {
    this.registration.dispose();
    this.rendered.clear();
  }
}
