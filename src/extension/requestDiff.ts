/**
 * "Compare with Matched Request": two requests of a session side by side in VS Code's diff editor
 * (read-only virtual documents of scheme `prefix-lens-request`, rendered in the worker by
 * report/requestText.ts), the later one's cursor on the line of its first changed byte. The documents are held
 * here while open (a bounded number of them); the worker computes everything.
 */
import * as vscode from 'vscode';
import type { SessionRef } from '../hosts/registry.js';
import type { SessionReport } from '../report/json.js';
import type { AnalysisWorker } from './analysisWorker.js';
import type { RequestComparisonText } from './workerProtocol.js';

export const REQUEST_SCHEME = 'prefix-lens-request';

/** How many rendered documents are kept for VS Code to read again (e.g. a diff tab reopened). */
const KEPT = 16;

export class RequestDiff implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly docs = new Map<string, string>();
  private seq = 0;
  private readonly registration: vscode.Disposable;

  constructor(private readonly worker: AnalysisWorker) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(REQUEST_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? 'Prefix Lens no longer holds this request. Open it again with "Compare with #N" in the Timeline or the command "Prefix Lens: Compare Request with Matched…".\n';
  }

  /**
   * Renders requests `base` and `index` of `report`'s session (read from `ref`) and opens them in
   * a diff editor titled with the break's place. Returns what the worker rendered.
   * @throws Error when the worker cannot read the session or either request
   */
  async open(ref: SessionRef, report: SessionReport, base: number, index: number, token?: vscode.CancellationToken): Promise<RequestComparisonText> {
    const r = await this.worker.run({ op: 'compare', ref, sessionId: report.id, base, index, env: { ...process.env } }, { urgent: true, token });
    const c = r.comparison;
    const name = report.title ?? report.id;
    const v = ++this.seq;
    // One folder per session and a version per rendering: a grown session's request is rendered afresh.
    const uri = (i: number) => vscode.Uri.from({ scheme: REQUEST_SCHEME, path: `/${report.host}/${report.id}/request-${i}.txt`, query: `v=${v}` });
    const [left, right] = [uri(base), uri(index)];
    this.keep(left, c.base.text);
    this.keep(right, c.request.text);
    const where = c.break ? `break: ${c.break.segment} · ${c.break.path} @${c.break.byteOffset}` : `#${index} extends #${base}`;
    // The cursor goes to the start of the changed line (the diff marks the characters): a reveal
    // of a far column would scroll the narrow side-by-side editor past the line's start.
    const at = c.request.changeAt;
    const selection = at ? new vscode.Range(at.line, 0, at.line, 0) : undefined;
    await vscode.commands.executeCommand('vscode.diff', left, right, `${name}: #${base} ↔ #${index} (${where})`, { preview: true, ...(selection ? { selection } : {}) });
    return c;
  }

  private keep(uri: vscode.Uri, text: string): void {
    this.docs.set(uri.toString(), text);
    // Oldest first: Map keeps insertion order.
    while (this.docs.size > KEPT) this.docs.delete(this.docs.keys().next().value!);
  }

  dispose(): void {
    this.registration.dispose();
    this.docs.clear();
  }
}
