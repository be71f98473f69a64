/**
 * The Sessions view (`prefixLens.sessions`): host → project (cwd) → session; a host whose
 * sessions all have one project shows them right under it (no project level). Listing uses file
 * metadata only (registry discovery in the worker); each session's summary is analyzed lazily when
 * its row is rendered (VS Code renders expanded nodes' children), served from the summary cache
 * when the file is unchanged, and refreshed (debounced) when a watched folder changes.
 */
import { homedir } from 'node:os';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import type { SessionRef } from '../hosts/registry.js';
import type { AnalysisWorker } from './analysisWorker.js';
import { CancelledError } from './analysisWorker.js';
import { ago, countsMarkdown, figuresText, rebilledMarkdown, rowName, sessionName, sessionSentence, tokens } from './format.js';
import { plural } from '../plural.js';
import type { Log } from './log.js';
import { discoverOptions, ruleOverrides } from './settings.js';
import { summarize, type SessionSummary, type SummaryCache } from './summaryCache.js';
import { appendUntrusted, safeMarkdown } from './untrustedMarkdown.js';

export type SessionsNode =
  | { kind: 'host'; host: string; label: string; refs: SessionRef[] }
  | { kind: 'project'; host: string; project: string | null; refs: SessionRef[] }
  /** `depth`: the row's level in the tree, 2 right under its host, 3 under a project (rowName). */
  | { kind: 'session'; ref: SessionRef; depth: 2 | 3 };

/**
 * A session's summary. `of` is the identity of the listing it was computed from (identityOf) and
 * the rules basis it was judged with (SummaryCache `basis`): when a later listing shows the session
 * grown or rewritten, or the rule overrides changed (also while it was being computed), the summary
 * is recomputed, and shown as it was (`previous`) until the new one is ready, so a session an agent
 * is writing updates in place.
 */
type Summary = { state: 'done'; summary: SessionSummary; of: string } | { state: 'pending'; previous?: SessionSummary } | { state: 'failed'; error: string; of: string };

/**
 * What a summary was computed from: the ref's size (bytes), mtime (ms) and content stamp; for a
 * Codex fork also its parent rollout (SessionRef.basePath) and that rollout's size and mtime as
 * the same listing shows it (`parent`, when listed), so a parent removed, moved, appearing or
 * rewritten makes the fork summarized again.
 */
const identityOf = (r: SessionRef, parent?: SessionRef): string =>
  `${r.size}:${r.mtimeMs}:${r.stamp ?? ''}${r.baseThread === undefined ? '' : `:${r.basePath ?? ''}:${parent ? `${parent.size}:${parent.mtimeMs}` : ''}`}`;

export class SessionsView implements vscode.TreeDataProvider<SessionsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SessionsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly listed = new vscode.EventEmitter<SessionRef[]>();
  /** Fires with every completed listing (newest first). */
  readonly onDidList = this.listed.event;
  private readonly summarizedEmitter = new vscode.EventEmitter<SessionRef>();
  /** Fires when a session's summary is ready (or failed), shown in the tree or not. */
  readonly onDidSummarize = this.summarizedEmitter.event;
  private refs: SessionRef[] | undefined;
  /** The last listing's refs by path (a Codex fork's parent rollout, identityOf). */
  private byPath = new Map<string, SessionRef>();
  /** Hosts of the registry in view order (from the worker, so this bundle loads no reader). */
  private hosts: Array<{ id: string; label: string }> = [];
  private listing: Promise<SessionRef[]> | undefined;
  private readonly summaries = new Map<string, Summary>();
  private readonly nodes = new Map<string, SessionsNode>();
  private watchers: vscode.Disposable[] = [];
  /** The roots `watchers` watch (sorted, as JSON). */
  private watchedKey: string | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  /** Counts listings started; only the newest one's result is kept. */
  private generation = 0;
  /** Set when the last listing finished: sessions found and how long it took (ms). */
  lastListing: { count: number; ms: number } | undefined;
  /**
   * What the last listing could not read (a configured folder missing or unreadable, folders
   * too deep to walk), one sentence each; each is logged once, when it first appears.
   */
  discoveryWarnings: string[] = [];

  constructor(
    private readonly worker: AnalysisWorker,
    private readonly cache: SummaryCache,
    private readonly log: Log,
  ) {}

  /** The sessions of the last listing (listing first if there is none yet). */
  async sessions(): Promise<SessionRef[]> {
    return this.refs ?? this.list();
  }

  /** A host's display name (the registry's label), else its id. */
  hostLabel(id: string): string {
    return this.hosts.find((h) => h.id === id)?.label ?? id;
  }

  /** The session whose file is `path` (the first, for a database), when listed. */
  async findByPath(path: string): Promise<SessionRef | undefined> {
    return (await this.sessions()).find((r) => r.path === path);
  }

  /** The summary of a session, when analyzed. */
  summaryOf(ref: SessionRef): SessionSummary | undefined {
    const s = this.summaries.get(ref.key);
    return s?.state === 'done' ? s.summary : s?.state === 'pending' ? s.previous : undefined;
  }

  /** Makes sure `ref`'s summary is (being) computed for this listing; onDidSummarize says when it is ready. */
  summarize(ref: SessionRef): void {
    this.ensure(ref);
  }

  /** Starts (re)analyzing `ref` unless its summary is of this very listing or is being computed. */
  private ensure(ref: SessionRef): Summary {
    const s = this.summaries.get(ref.key);
    if (s && (s.state === 'pending' || s.of === this.stampOf(ref))) return s;
    this.analyze(ref, s?.state === 'done' ? s.summary : undefined);
    return this.summaries.get(ref.key)!;
  }

  /** What a summary of `ref` computed now is of: its listing's identity and the rules basis. */
  private stampOf(ref: SessionRef, basis = this.cache.basis()): string {
    const parent = typeof ref.basePath === 'string' ? this.byPath.get(ref.basePath) : undefined;
    return `${identityOf(ref, parent)}|${basis}`;
  }

  /** Re-lists every host now; resolves with the sessions found. */
  refresh(): Promise<SessionRef[]> {
    this.refs = undefined;
    this.listing = undefined;
    const p = this.list();
    this.changed.fire(undefined);
    return p;
  }

  /**
   * Summarizes every session again when its row is next shown (the rule overrides changed), showing
   * the old figures until the new ones are ready.
   */
  resummarize(): void {
    // Each summary's `of` names the basis it was judged with: the rows shown now are summarized again.
    this.changed.fire(undefined);
  }

  /** Re-lists after `delayMs` of quiet (file-change bursts while an agent writes). */
  refreshSoon(delayMs = 750): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refresh();
    }, delayMs);
  }

  private list(): Promise<SessionRef[]> {
    if (this.listing) return this.listing;
    const t0 = performance.now();
    const opts = discoverOptions();
    // A listing a later refresh replaced answers its own callers only: it sets nothing.
    const generation = ++this.generation;
    const listing: Promise<SessionRef[]> = this.worker.run({ op: 'discover', opts }, { urgent: true }).then(
      (r) => {
        if (generation !== this.generation) return r.refs;
        this.refs = r.refs;
        this.byPath = new Map(r.refs.map((x) => [x.path, x]));
        this.hosts = r.hosts;
        this.lastListing = { count: r.refs.length, ms: Math.round(performance.now() - t0) };
        this.log.info(`listed ${plural(r.refs.length, 'session')} in ${this.lastListing.ms} ms (discovery ${r.ms} ms in the worker)`);
        // A listing runs again at every file event: a warning is logged when it is new, not each time.
        const known = new Set(this.discoveryWarnings);
        for (const w of r.warnings) if (!known.has(w)) this.log.warn(`sessions: ${w}`);
        this.discoveryWarnings = r.warnings;
        void vscode.commands.executeCommand('setContext', 'prefixLens.hasSessions', r.refs.length > 0);
        this.watch(r.watchRoots);
        this.listed.fire(r.refs);
        return r.refs;
      },
      (e: Error) => {
        if (this.listing === listing) this.listing = undefined;
        this.log.error(`listing sessions failed: ${e.message}`);
        return [];
      },
    );
    this.listing = listing;
    return listing;
  }

  /**
   * Watches `roots` (recursively). Kept as they are when the roots did not change: a watcher starts
   * asynchronously, so one recreated on every listing (which a change triggers) misses the writes
   * of its first moments, e.g. the rest of a turn an agent is writing.
   */
  private watch(roots: string[]): void {
    const key = JSON.stringify([...roots].sort());
    if (key === this.watchedKey) return;
    this.watchedKey = key;
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    for (const root of roots) {
      const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(root), '**/*'));
      const on = (uri: vscode.Uri) => {
        this.log.debug(`changed: ${uri.fsPath}`);
        this.refreshSoon();
      };
      this.watchers.push(w, w.onDidCreate(on), w.onDidChange(on), w.onDidDelete(on));
    }
  }

  async getChildren(node?: SessionsNode): Promise<SessionsNode[]> {
    if (!node) {
      const refs = await this.sessions();
      return this.hosts.map((h) => ({ kind: 'host' as const, host: h.id, label: h.label, refs: refs.filter((r) => r.host === h.id) })).filter((n) => n.refs.length);
    }
    if (node.kind === 'host') {
      const byProject = new Map<string | null, SessionRef[]>();
      for (const r of node.refs) byProject.set(r.project, [...(byProject.get(r.project) ?? []), r]);
      // One project: its level would only add a row and an indent (a narrow side bar), so the
      // sessions sit right under the host, which names the project.
      if (byProject.size === 1) return node.refs.map((ref) => this.sessionNode(ref, 2));
      // Refs come newest first, so projects keep the order of their newest session.
      return [...byProject].map(([project, refs]) => ({ kind: 'project' as const, host: node.host, project, refs }));
    }
    if (node.kind === 'project') return node.refs.map((ref) => this.sessionNode(ref, 3));
    return [];
  }

  private sessionNode(ref: SessionRef, depth: 2 | 3): SessionsNode {
    const n: SessionsNode = { kind: 'session', ref, depth };
    this.nodes.set(ref.key, n);
    return n;
  }

  getTreeItem(node: SessionsNode): vscode.TreeItem {
    // No tooltip here: VS Code asks resolveTreeItem for it when the row is hovered, so a render
    // of hundreds of rows builds labels and descriptions only.
    if (node.kind === 'host') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `host:${node.host}`;
      const { count, projects, only, where } = hostShape(node);
      item.description = only ? `${count} · ${tildify(only)}` : count;
      item.accessibilityInformation = { label: projects === 1 ? `${node.label}: ${count}${only ? ` of the project ${only}` : `, ${where}`}.` : `${node.label}: ${count} in ${plural(projects, 'project')}.` };
      item.contextValue = 'host';
      return item;
    }
    if (node.kind === 'project') {
      const name = node.project ? basename(node.project) || node.project : '(no project)';
      const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `project:${node.host}:${node.project ?? ''}`;
      // The count first (it survives a narrow side bar), then the parent folder, which tells apart
      // projects with the same name (every Pi lab cwd is ".../project").
      const parent = node.project ? tildify(dirname(node.project)) : '';
      const count = plural(node.refs.length, 'session');
      item.description = [count, parent].filter(Boolean).join(' · ');
      item.accessibilityInformation = { label: node.project ? `Project ${node.project}: ${count}.` : `Sessions without a recorded working directory: ${count}.` };
      item.iconPath = new vscode.ThemeIcon('folder');
      item.contextValue = 'project';
      return item;
    }
    return this.sessionItem(node.ref, node.depth);
  }

  /**
   * A row's hover, built when VS Code asks for it (the row is hovered; getTreeItem leaves
   * `tooltip` unset): text only as a plain string, which VS Code shows as text; a session's figures
   * as Markdown, its untrusted name, id, path and project appended as text (appendUntrusted).
   * Of the row's state now (a summary that arrived since the row was rendered is shown).
   */
  resolveTreeItem(item: vscode.TreeItem, node: SessionsNode): vscode.TreeItem {
    item.tooltip = this.tooltipOf(node);
    return item;
  }

  private tooltipOf(node: SessionsNode): string | vscode.MarkdownString {
    if (node.kind === 'host') {
      const { count, projects, where } = hostShape(node);
      return projects === 1 ? `${node.label}: ${count}\n${where}` : `${node.label}: ${count} in ${plural(projects, 'project')}`;
    }
    if (node.kind === 'project') return `${node.project ?? 'Sessions without a recorded working directory'}\n${plural(node.refs.length, 'session')}`;
    const ref = node.ref;
    const s = this.summaries.get(ref.key);
    const summary = this.summaryOf(ref);
    const name = summary?.title ?? sessionName(ref);
    if (s?.state === 'failed') return `${name}\ncould not be read: ${s.error}\n${ref.path}`;
    if (!summary) return `${name}\nanalyzing…\n${ref.path}`;
    return tooltip(ref, summary, name);
  }

  private sessionItem(ref: SessionRef, depth: 2 | 3): vscode.TreeItem {
    const s = this.ensure(ref);
    const summary = this.summaryOf(ref);
    const name = summary?.title ?? sessionName(ref);
    // Cut by depth, so that a long title or first prompt leaves room for the figures in a 300 px
    // side bar (the tooltip and the accessible name carry it whole).
    const item = new vscode.TreeItem(rowName(name, depth), vscode.TreeItemCollapsibleState.None);
    item.id = ref.key;
    item.contextValue = ref.host === 'opencode' ? 'session.row' : 'session.file';
    item.command = { command: 'prefixLens.openTimeline', title: 'Open Timeline', arguments: [ref] };
    item.resourceUri = vscode.Uri.file(ref.path);
    const when = ago(ref.mtimeMs);
    if (s.state === 'pending' && !summary) {
      item.description = `analyzing… · ${when}`;
      item.iconPath = new vscode.ThemeIcon('loading~spin');
      item.accessibilityInformation = { label: `${name}: being analyzed, written ${when}.` };
    } else if (s.state === 'failed') {
      item.description = `could not be read · ${when}`;
      item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
      item.accessibilityInformation = { label: `${name}: could not be read (${s.error}), written ${when}.` };
    } else {
      const t = summary!;
      item.description = `${figuresText(t)} · ${when}`;
      item.iconPath = iconFor(t);
      item.accessibilityInformation = { label: sessionSentence(name, t, when) };
    }
    return item;
  }

  /** Analyzes a session's summary in the background (cache first); `previous` is shown meanwhile. */
  private analyze(ref: SessionRef, previous?: SessionSummary): void {
    this.summaries.set(ref.key, { state: 'pending', previous });
    void (async () => {
      // The rules this summary is judged with, read once: a change meanwhile makes it stale (`of`), never filed under the new ones.
      const overrides = ruleOverrides();
      const basis = this.cache.basis();
      let summary = await this.cache.get(ref, basis);
      if (!summary) {
        try {
          // The capture folders as the analysis will find them: bodies saved meanwhile keep the summary out of the cache.
          const captures = await this.cache.capturesBefore(ref);
          const r = await this.worker.run({ op: 'analyze', ref, env: { ...process.env }, overrides });
          const report = r.sessions.find((x) => x.id === ref.id) ?? r.sessions[0];
          if (!report) throw new Error('no session in the file');
          summary = summarize(report);
          this.log.info(`analyzed ${ref.path}${ref.host === 'opencode' ? ` (${ref.id})` : ''}: ${plural(summary.requests, 'request')}, ${plural(summary.breaks, 'break')} in ${r.ms} ms`);
          await this.cache.set(ref, summary, basis, captures);
        } catch (e) {
          if (e instanceof CancelledError) {
            this.summaries.delete(ref.key);
            return;
          }
          this.summaries.set(ref.key, { state: 'failed', error: (e as Error).message, of: this.stampOf(ref, basis) });
          this.log.warn(`analysis of ${ref.path} failed: ${(e as Error).message}`);
          this.fireFor(ref);
          return;
        }
      }
      this.summaries.set(ref.key, { state: 'done', summary, of: this.stampOf(ref, basis) });
      this.fireFor(ref);
    })();
  }

  /** Summaries of these sessions, analyzing those not known yet (resolves when all are done). */
  async summariesOf(refs: SessionRef[]): Promise<Array<SessionSummary | undefined>> {
    for (const r of refs) this.ensure(r);
    for (;;) {
      const states = refs.map((r) => this.summaries.get(r.key));
      if (states.every((s) => s && s.state !== 'pending')) return states.map((s) => (s?.state === 'done' ? s.summary : undefined));
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  private fireFor(ref: SessionRef): void {
    const n = this.nodes.get(ref.key);
    if (n) this.changed.fire(n);
    this.summarizedEmitter.fire(ref);
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    for (const w of this.watchers) w.dispose();
    this.changed.dispose();
    this.listed.dispose();
    this.summarizedEmitter.dispose();
  }
}

/**
 * A host row's facts: its session count (`3 sessions`), how many distinct projects, the one
 * project when there is exactly one recorded (else null) and what the row says of it. One distinct
 * project, a recorded one or none, is the test getChildren makes to skip the project level.
 */
function hostShape(node: { refs: SessionRef[] }): { count: string; projects: number; only: string | null; where: string } {
  const distinct = new Set(node.refs.map((r) => r.project));
  const only = distinct.size === 1 ? [...distinct][0] : null;
  return { count: plural(node.refs.length, 'session'), projects: distinct.size, only, where: only ? `project ${only}` : 'no recorded working directory' };
}

/** `/home/me/src` → `~/src` for the extension host's home. */
function tildify(p: string): string {
  const h = homedir();
  return p === h ? '~' : p.startsWith(`${h}/`) ? `~${p.slice(h.length)}` : p;
}

function iconFor(t: SessionSummary): vscode.ThemeIcon {
  if (t.errors > 0 && t.requests === 0) return new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
  if (t.breaks > 0) return new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'));
  if (t.misses > 0) return new vscode.ThemeIcon('info', new vscode.ThemeColor('problemsInfoIcon.foreground'));
  if (t.requests === 0) return new vscode.ThemeIcon('circle-outline');
  return new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'));
}

/** A session row's hover: its whole name and id (text), its counts and tokens (numbers, Markdown), its file and project (text). */
function tooltip(ref: SessionRef, t: SessionSummary, name: string): vscode.MarkdownString {
  const md = safeMarkdown();
  appendUntrusted(md, `${name}\n${ref.id}`);
  md.appendMarkdown(`\n\n${countsMarkdown(t)}\n\n`);
  md.appendMarkdown(`| | tokens |\n|---|---:|\n| cache read | ${tokens(t.cacheRead)} |\n| cache write | ${tokens(t.cacheWrite)} |\n| uncached | ${tokens(t.uncached)} |\n\n`);
  md.appendMarkdown(`${rebilledMarkdown(t)}\n\n`);
  appendUntrusted(md, `${ref.path}${ref.project ? `\nproject ${ref.project}` : ''}`);
  return md;
}
