/**
 * The status-bar item of the session an agent is writing now: the newest listed session, when its
 * file changed within ACTIVE_MS, with its hit rate and breaks. The figures are the Sessions view's
 * summaries (so they follow the file as the view does); when the session's latest request broke
 * the cache, the item says so in the warning colours. Click: that session's Timeline. Hidden when no
 * session is active. It lists nothing itself (activation reads nothing): it appears after the
 * first listing a view or command asked for, and follows every later one.
 */
import * as vscode from 'vscode';
import type { SessionRef } from '../hosts/registry.js';
import { ago, percent, plural, sessionName, tokens, usd } from './format.js';
import type { SessionsView } from './sessionsView.js';
import type { SessionSummary } from './summaryCache.js';

/** How long after its last write a session counts as active (ms): a turn, plus a pause to read it. */
export const ACTIVE_MS = 30 * 60_000;

export class ActiveSessionStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly listener: vscode.Disposable;
  private readonly timer: ReturnType<typeof setInterval>;
  private running: Promise<void> | undefined;
  private again = false;
  /** The last listing (newest first); undefined until there was one. */
  private refs: SessionRef[] | undefined;
  /** The session shown, or undefined while hidden (for tests and the log). */
  shown: SessionRef | undefined;

  constructor(private readonly sessions: SessionsView) {
    this.item = vscode.window.createStatusBarItem('prefixLens.activeSession', vscode.StatusBarAlignment.Right, 101);
    this.item.name = 'Prefix Lens: Active Session';
    // A listing, or a new summary in the view; the minute timer hides a session gone quiet.
    this.listener = vscode.Disposable.from(
      sessions.onDidList((refs) => {
        this.refs = refs;
        void this.update();
      }),
      sessions.onDidChangeTreeData(() => void this.update()),
    );
    this.timer = setInterval(() => void this.update(), 60_000);
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

  /** Re-renders from the current listing; calls during a render coalesce into one more. */
  update(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.render();
        } while (this.again);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async render(): Promise<void> {
    if (!this.refs) return;
    const ref = this.refs[0] && Date.now() - this.refs[0].mtimeMs < ACTIVE_MS ? this.refs[0] : undefined;
    this.shown = ref;
    if (!ref) {
      this.item.hide();
      return;
    }
    const summary = this.sessions.summaryOf(ref);
    this.show(ref, summary);
    // Makes the view (re)compute it when it is missing or stale; rendered again only if it changed
    // (the view fires no event for a session whose row is not shown).
    void this.sessions.summariesOf([ref]).then(() => {
      if (this.sessions.summaryOf(ref) !== summary) void this.update();
    });
  }

  private show(ref: SessionRef, s: SessionSummary | undefined): void {
    const name = sessionName(ref);
    this.item.command = { command: 'prefixLens.openTimeline', title: 'Open Timeline', arguments: [ref] };
    const md = new vscode.MarkdownString(undefined, true);
    md.supportHtml = false;
    md.appendMarkdown('**Prefix Lens** · active session\n\n');
    // appendText escapes the untrusted title and path (a line break in it becomes a paragraph).
    md.appendText(`${s?.title ?? name}\n`);
    md.appendText(`${this.sessions.hostLabel(ref.host)}${ref.project ? ` · ${ref.project}` : ''} · written ${ago(ref.mtimeMs)}\n`);
    const broke = s?.last?.verdict === 'break';
    if (!s) {
      this.item.text = '$(loading~spin) analyzing…';
      this.item.backgroundColor = undefined;
      this.item.accessibilityInformation = { label: `Prefix Lens: analyzing the active session ${name}` };
    } else {
      const hit = s.hitRate === null ? 'no usage' : `${percent(s.hitRate)} hit`;
      this.item.text = `$(${broke ? 'warning' : 'pulse'}) ${hit} · ${plural(s.breaks, 'break')}`;
      this.item.backgroundColor = broke ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
      this.item.accessibilityInformation = { label: `Prefix Lens: active session ${name}: ${hit}, ${plural(s.breaks, 'break')}${broke ? ', the latest request broke the cache' : ''}` };
      md.appendMarkdown(`**${s.requests}** requests · **${s.breaks}** breaks · hit rate **${s.hitRate === null ? 'n/a' : percent(s.hitRate)}**\n\n`);
      if (broke && s.last) md.appendMarkdown(`$(warning) The latest request, #${s.last.index}, broke the cache: **${tokens(s.last.lostTokens)}** tokens billed again.\n\n`);
      md.appendMarkdown(`Re-billed by breaks: **${tokens(s.lostTokens)}** tokens, **${usd(s.costUSD)}**\n\n`);
    }
    md.appendMarkdown('Click to open its Timeline.');
    this.item.tooltip = md;
    this.item.show();
  }

  dispose(): void {
    clearInterval(this.timer);
    this.listener.dispose();
    this.item.dispose();
  }
}
