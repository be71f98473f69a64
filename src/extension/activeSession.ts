/**
 * The status-bar item of the session an agent is writing now: the newest listed session, when its
 * file changed within ACTIVE_MS, named (title or first prompt, cut: format.ts statusText) with its
 * hit rate and breaks: `$(warning) pi lab session · 64% hit · 3 breaks`. The figures are the
 * Sessions view's summaries (so they follow the file as the view does); when the session's latest
 * request broke the cache, the item says so in the warning colours. Click: that session's Timeline,
 * at the latest request when it broke (else at the first break, as the Timeline opens). Hidden when no
 * session is active. It lists nothing itself (activation reads nothing): it appears after the
 * first listing a view or command asked for, and follows every later one.
 */
import * as vscode from 'vscode';
import type { SessionRef } from '../hosts/registry.js';
import { plural } from '../plural.js';
import { ago, countsMarkdown, hitText, rebilledMarkdown, sessionName, statusText, tokens } from './format.js';
import type { SessionsView } from './sessionsView.js';
import type { SessionSummary } from './summaryCache.js';
import { appendUntrusted, safeMarkdown } from './untrustedMarkdown.js';

/** How long after its last write a session counts as active (ms): a turn, plus a pause to read it. */
const ACTIVE_MS = 30 * 60_000;
export class ActiveSessionStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly listener: vscode.Disposable;
  private readonly timer: ReturnType<typeof setInterval>;
  /** The last listing (newest first); undefined until there was one. */
  private refs: SessionRef[] | undefined;
  /** The session shown, or undefined while hidden (for tests and the log). */
  shown: SessionRef | undefined;

  constructor(private readonly sessions: SessionsView) {
    this.item = vscode.window.createStatusBarItem('prefixLens.activeSession', vscode.StatusBarAlignment.Right, 101);
    this.item.name = 'Prefix Lens: Active Session';
    // A listing, or the shown session's summary ready; the minute timer hides a session gone quiet.
    this.listener = vscode.Disposable.from(
      sessions.onDidList((refs) => {
        this.refs = refs;
        this.update();
      }),
      sessions.onDidSummarize((ref) => ref.key === this.shown?.key && this.update()),
    );
    this.timer = setInterval(() => this.update(), 60_000);
  }

  /** The item's text (`$(icon) …`) and tooltip (markdown source), for tests. */
  get text(): string {
    return this.item.text;
  }
  get tooltip(): string {
    const t = this.item.tooltip;
    return typeof t === 'string' ? t : (t?.value ?? '');
  }
  get warning(): boolean {
    return this.item.backgroundColor !== undefined;
  }
  /** What a click runs (command id and arguments), for tests. */
  get command(): vscode.Command | undefined {
    const c = this.item.command;
    return typeof c === 'string' ? { command: c, title: c } : c;
  }

  /** Shows the newest listed session if it is active (its summary as far as known; asks the view for a current one), else hides. */
  update(): void {
    const newest = this.refs?.[0];
    const ref = newest && Date.now() - newest.mtimeMs < ACTIVE_MS ? newest : undefined;
    this.shown = ref;
    if (!ref) {
      this.item.hide();
      return;
    }
    // Missing or stale: the view computes it and fires onDidSummarize (nothing when it is current).
    this.sessions.summarize(ref);
    this.show(ref, this.sessions.summaryOf(ref));
  }

  private show(ref: SessionRef, s: SessionSummary | undefined): void {
    const name = s?.title ?? sessionName(ref);
    const broke = s?.last?.verdict === 'break';
    // At the latest request when it broke: that is what the warning colours point at.
    const at = broke && s?.last ? s.last.index : undefined;
    this.item.command = { command: 'prefixLens.openTimeline', title: 'Open Timeline', arguments: [at === undefined ? ref : { ref, requestIndex: at }] };
    // Theme icons for the $(warning) below; the title and path are untrusted text.
    const md = safeMarkdown(true);
    md.appendMarkdown('**Prefix Lens** · the session being written now\n\n');
    appendUntrusted(md, `${name}\n${this.sessions.hostLabel(ref.host)}${ref.project ? ` · ${ref.project}` : ''} · written ${ago(ref.mtimeMs)}`);
    md.appendMarkdown('\n\n');
    this.item.text = statusText(name, s);
    if (!s) {
      this.item.backgroundColor = undefined;
      this.item.accessibilityInformation = { label: `Prefix Lens: analyzing the active session ${name}` };
    } else {
      const hit = hitText(s);
      this.item.backgroundColor = broke ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
      this.item.accessibilityInformation = { label: `Prefix Lens: active session ${name}: ${hit}, ${plural(s.breaks, 'break')}${broke ? ', the latest request broke the cache' : ''}` };
      md.appendMarkdown(`${countsMarkdown(s)}\n\n`);
      // A break can re-bill nothing: what the request sends after the change may all be new (a compaction's summary, another branch).
      if (broke && s.last) {
        const again = s.last.lostTokens > 0 ? `**${tokens(s.last.lostTokens)}** tokens billed again` : 'nothing the cache held was billed again';
        md.appendMarkdown(`$(warning) The latest request, #${s.last.number ?? s.last.index}, broke the cache: ${again}.\n\n`);
      }
      md.appendMarkdown(`${rebilledMarkdown(s)}\n\n`);
    }
    md.appendMarkdown(at === undefined ? 'Click to open its Timeline.' : `Click to open its Timeline at request #${s?.last?.number ?? at}.`);
    this.item.tooltip = md;
    this.item.show();
  }

  dispose(): void {
    clearInterval(this.timer);
    this.listener.dispose();
    this.item.dispose();
  }
}
