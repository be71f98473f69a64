/**
 * Timeline panels: one WebviewPanel per session showing the Timeline app (dist/webview.js +
 * dist/webview.css, media/) in the shell of src/report/webviewHtml.ts. Messages are those of
 * src/protocol.ts, checked with its zod schemas on receipt (the app checks its side). The panel
 * follows its session file and its captured bodies (live tail: the worker continues the session's
 * analysis when either grows and sends what changed, livePatch.ts) and is restored after a
 * window reload by the WebviewPanelSerializer from the state the app saves.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { folderName } from '../capture/store.js';
import { CAPTURE_JOINED, captureRoots } from '../hosts/capturestamp.js';
import type { SessionRef } from '../hosts/registry.js';
import { FromWebviewMessageSchema, MessageType, WebviewStateSchema, applyPatch, type FromWebviewMessage, type LivePatch, type ToWebviewMessage } from '../protocol.js';
import { htmlReport } from '../report/html.js';
import type { Report, SessionReport } from '../report/json.js';
import { webviewShellHtml } from '../report/webviewHtml.js';
import { plural } from '../plural.js';
import type { LiveStep } from './livePatch.js';
import type { Log } from './log.js';

export const VIEW_TYPE = 'prefixLens.timeline';

/** Hosts whose open Timeline follows its transcript (one file, or OpenCode's database and WAL). */
const LIVE_HOSTS: ReadonlySet<SessionRef['host']> = new Set<SessionRef['host']>(['pi', 'opencode', 'claude-code', 'codex', 'pi-desktop']);
/** A capture folder of one UTC day (requests sent without a session header). */
const DAY_FOLDER = /^\d{4}-\d\d-\d\d$/;

/** What the panels need from the rest of the extension. */
export interface TimelineDeps {
  extensionUri: vscode.Uri;
  log: Log;
  /** Analyzes a session; undefined when cancelled. `quiet`: no progress notification (a panel restored after a reload). */
  analyze(ref: SessionRef, quiet?: boolean): Promise<SessionReport | undefined>;
  /**
   * The ref as its files are now (size, mtime and the host's own stamp), undefined when the
   * registry no longer finds it: what the live tail analyzes, so a cache entry of the old state
   * is not taken for the new one.
   */
  current(ref: SessionRef): Promise<SessionRef | undefined>;
  /** The listed session with this key or path (restoring a panel after reload). */
  find(key: string | undefined, path: string): Promise<SessionRef | undefined>;
  /**
   * The next step of the live tail of `ref` for the panel with id `panel` (the worker keeps
   * following it for that panel: src/extension/livePatch.ts). `opened`: the session was read in
   * full for it. @throws Error when it cannot be read
   */
  follow(ref: SessionRef, panel: string): Promise<LiveStep & { opened: boolean }>;
  /** Drops what the worker keeps for a panel (it closed, or a patch did not apply). */
  unfollow(panel: string): Promise<void>;
}

class TimelinePanel {
  private report: SessionReport;
  private selected: number | undefined;
  private ready = false;
  private pendingSelect: number | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private tailTimer: ReturnType<typeof setTimeout> | undefined;
  /** Loads posted to the webview (for tests of the live tail). */
  loads = 0;
  /** The last copy to the clipboard a `copyPath` message started (tests wait for it). */
  copied: Thenable<void> | undefined;
  /** Patches posted to the webview (appends judged alone: only their entries are sent). */
  patchesPosted = 0;
  /** The report the webview was last sent (a patch is posted only on top of it). */
  private posted: SessionReport | undefined;
  /** Live-tail steps that read the session in full (the first change, or starting over). */
  readonly tailStats = { opened: 0 };
  private tailing: Promise<void> | undefined;
  private tailAgain = false;
  /** Why the step `tailAgain` asks for runs (for the log). */
  private tailWhy = 'changed';
  private disposed = false;
  /** This panel's id for the worker's live state (two panels of one session each have their own). */
  private readonly liveId = randomUUID();
  /** The watcher of a Codex fork's parent rollout (watchParent), and the path it watches. */
  private parentWatch: { path: string; watcher: vscode.Disposable } | undefined;

  constructor(
    readonly panel: vscode.WebviewPanel,
    readonly ref: SessionRef,
    report: SessionReport,
    private readonly deps: TimelineDeps,
    select: number | undefined,
    private readonly onDispose: (p: TimelinePanel) => void,
  ) {
    this.report = report;
    this.pendingSelect = select;
    const dist = vscode.Uri.joinPath(deps.extensionUri, 'dist');
    panel.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    panel.iconPath = vscode.Uri.joinPath(deps.extensionUri, 'resources', 'prefix-lens.svg');
    panel.title = titleOf(report);
    panel.webview.html = webviewShellHtml({
      cspSource: panel.webview.cspSource,
      nonce: randomBytes(18).toString('base64'),
      scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
      title: titleOf(report),
    });
    this.disposables.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      panel.onDidDispose(() => this.dispose()),
    );
    // Live tail: the session's file changing (an agent writing) makes a live step (tail).
    if (LIVE_HOSTS.has(ref.host)) {
      const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dirOf(ref.path)), baseOf(ref.path) + (ref.host === 'opencode' ? '*' : '')));
      this.disposables.push(w, w.onDidChange(() => this.tailSoon()), w.onDidCreate(() => this.tailSoon()));
    }
    // A captured body can be saved after its transcript line (the proxy writes the meta when the
    // response ends): a new one in this session's folder, or in a day folder (hosts without a
    // session header), is a change of the session too.
    if (LIVE_HOSTS.has(ref.host) && CAPTURE_JOINED.has(ref.host)) {
      const own = new Set([folderName(ref.id, 0), ...(ref.parentId ? [folderName(ref.parentId, 0)] : [])]);
      for (const root of captureRoots(process.env)) this.disposables.push(watchCaptures(root, own, () => this.tailSoon()));
    }
    this.watchParent(ref);
  }

  /**
   * A Codex fork reads its parent rollout's first lines: the parent changing (growing, rewritten,
   * moved, removed) is a change of the session too. Watched where the latest ref names it
   * (SessionRef.basePath: each live step takes the ref as the registry resolves it now, the
   * parent looked for again); none found: not watched (it is looked for at the fork's next change).
   */
  private watchParent(ref: SessionRef): void {
    const path = ref.host === 'codex' && typeof ref.basePath === 'string' ? ref.basePath : null;
    if (path === this.parentWatch?.path || this.disposed) return;
    this.parentWatch?.watcher.dispose();
    this.parentWatch = undefined;
    if (path === null) return;
    // fs.watch on its folder (inotify, watching once this returns: a change right after a re-point
    // is not missed, and a folder created since the panel opened, `archived_sessions/`, is watched too).
    const name = baseOf(path);
    try {
      const w = watch(dirOf(path), (_e, file) => {
        if (file === name) this.tailSoon();
      });
      w.on('error', () => w.close());
      this.parentWatch = { path, watcher: { dispose: () => w.close() } };
    } catch {
      // its folder is gone: the fork's next change looks for the parent again
    }
  }

  private post(m: ToWebviewMessage): void {
    void this.panel.webview.postMessage(m);
  }

  private load(): void {
    const report: Report = { version: 1, sessions: [this.report] };
    const sel = this.pendingSelect;
    this.pendingSelect = undefined;
    // The app selects what the load names without posting `selected` back.
    if (sel) this.selected = sel;
    this.loads++;
    this.posted = this.report;
    this.post({ type: MessageType.Load, report, live: true, ...(sel ? { select: { sessionIndex: 0, requestIndex: sel } } : {}) });
  }

  /** Selects a request (e.g. "Open Timeline at this request"), now or once the app is ready. */
  select(requestIndex: number): void {
    if (!this.ready) {
      this.pendingSelect = requestIndex;
      return;
    }
    this.post({ type: MessageType.Select, ref: { sessionIndex: 0, requestIndex } });
    this.selected = requestIndex;
  }

  /**
   * The request the panel shows selected: the one the user picked (the app's `selected`), or the
   * one the extension last had it select (a load at a request, `select`), which the app does not echo.
   */
  get selectedRequest(): number | undefined {
    return this.selected;
  }

  get current(): SessionReport {
    return this.report;
  }

  /**
   * Handles a message from the webview (the panel's onDidReceiveMessage; tests call it with what
   * the app posts): validated with the protocol's schema, dropped and logged when it does not parse.
   */
  receive(raw: unknown): void {
    const parsed = FromWebviewMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.deps.log.warn(`timeline: dropped a message that does not match the protocol: ${parsed.error.message}`);
      return;
    }
    const m: FromWebviewMessage = parsed.data;
    if (m.type === MessageType.Ready) {
      this.ready = true;
      this.load();
    } else if (m.type === MessageType.Selected) {
      this.selected = m.ref.requestIndex;
    } else if (m.type === MessageType.RevealInTranscript) {
      // Only files of this report: the webview cannot make the extension open anything else.
      const known = m.file === this.report.path || this.report.requests.some((r) => r.file === m.file);
      if (!known) {
        this.deps.log.warn(`timeline: not revealing ${m.file}: not a file of this session`);
        return;
      }
      void vscode.commands.executeCommand('prefixLens.revealInTranscript', { path: m.file, line: m.line, row: m.row });
    } else if (m.type === MessageType.ExportHtml) {
      void vscode.commands.executeCommand('prefixLens.exportHtml', this.ref);
    } else if (m.type === MessageType.CompareRequests) {
      // Only requests this report has: the webview names indices, the extension reads them itself.
      const has = (i: number) => this.report.requests.some((r) => r.index === i);
      if (!has(m.requestIndex) || !has(m.base)) {
        this.deps.log.warn(`timeline: not comparing #${m.requestIndex} with #${m.base}: not both in this session`);
        return;
      }
      void vscode.commands.executeCommand('prefixLens.compareRequests', { ref: this.ref, requestIndex: m.requestIndex, base: m.base });
    } else if (m.type === MessageType.CopyPath) {
      // The panel shows one session (index 0); the path copied is the one the extension read.
      if (m.sessionIndex !== 0) {
        this.deps.log.warn(`timeline: not copying the path of session ${m.sessionIndex}: the panel shows one session`);
        return;
      }
      this.copied = vscode.env.clipboard.writeText(this.report.path).then(
        () => void vscode.window.setStatusBarMessage('Prefix Lens: session path copied', 3000),
        (e: unknown) => this.deps.log.warn(`timeline: the session path could not be copied: ${e instanceof Error ? e.message : String(e)}`),
      );
    }
  }

  /**
   * Judges the session again with the rules as they are now (`prefixLens.ttlSecondsOverrides` or
   * `prefixLens.priceOverrides` changed): the worker reads it afresh under the new rules (a Pi
   * session it follows was opened with the old ones, so it starts over) and the whole report is
   * sent; the app keeps its selection (a Load without `select`). Waits for a live step in flight.
   */
  rejudge(): Promise<void> {
    return this.tailOnce('judged with the new rules');
  }

  private tailSoon(): void {
    if (this.tailTimer) clearTimeout(this.tailTimer);
    this.tailTimer = setTimeout(() => void this.tailOnce('changed'), 500);
  }

  /**
   * One live-tail step at a time (patches apply in order); a change during one runs one more
   * (and resolves when that one is done). `why`: for the log.
   */
  private async tailOnce(why: string): Promise<void> {
    if (this.tailing) {
      this.tailAgain = true;
      this.tailWhy = why;
      return this.tailing;
    }
    this.tailing = (async () => {
      try {
        do {
          this.tailAgain = false;
          await this.tail(why);
          why = this.tailWhy;
        } while (this.tailAgain && !this.disposed);
      } catch (e) {
        this.deps.log.warn(`timeline: live update of ${this.ref.path} failed: ${(e as Error).message}`);
      } finally {
        this.tailing = undefined;
      }
    })();
    await this.tailing;
  }

  private async tail(why: string): Promise<void> {
    // Pi: the worker's live analysis checks the file itself. Other hosts are analyzed through the
    // result cache: the ref as the registry sees it now (OpenCode's row stamp), else the file's stat.
    let ref = this.ref;
    if (ref.host !== 'pi') {
      const fresh = await this.deps.current(this.ref).catch(() => undefined);
      if (fresh) ref = fresh;
      else {
        const { stat } = await import('node:fs/promises');
        const st = await stat(this.ref.path).catch(() => undefined);
        if (!st) return;
        // A fork's parent as found when the panel opened may have moved or appeared since: looked for again by the reader.
        ref = { ...this.ref, size: st.size, mtimeMs: st.mtimeMs, stamp: undefined, ...(this.ref.baseThread !== undefined ? { basePath: undefined } : {}) };
      }
      this.watchParent(ref);
    }
    const step = await this.next(ref).catch((e: Error) => {
      this.deps.log.warn(`timeline: live update of ${ref.path} failed: ${e.message}`);
      return undefined;
    });
    if (!step || this.disposed) return;
    const { report, patch } = step;
    this.deps.log.info(`timeline: ${ref.path} ${why}, ${plural(report.requests.length, 'request')} now`);
    const before = this.report;
    this.report = report;
    this.panel.title = titleOf(report);
    if (!this.ready) return;
    // Only the change when the webview has the report it follows; else (or when it cannot apply it) the whole.
    if (patch && this.posted === before) {
      this.posted = report;
      this.patchesPosted++;
      this.post({ type: MessageType.Patch, sessionIndex: 0, patch });
    } else this.load();
  }

  /** The report after the next live step (with the patch that made it, if one did), or null when nothing changed. */
  private async next(ref: SessionRef): Promise<{ report: SessionReport; patch: LivePatch | null } | null> {
    const step = await this.follow(ref);
    if (!step?.patch) return step?.full ? { report: step.full, patch: null } : null;
    try {
      return { report: applyPatch(this.report, step.patch), patch: step.patch };
    } catch (e) {
      // Not the report the worker continued from: start over from the files.
      this.deps.log.warn(`timeline: ${(e as Error).message}; reading ${ref.path} again`);
      await this.deps.unfollow(this.liveId);
      const again = await this.follow(ref);
      return again?.full ? { report: again.full, patch: null } : null;
    }
  }

  /** One live step of this panel (undefined once it is closed), counting the full reads. */
  private async follow(ref: SessionRef): Promise<(LiveStep & { opened: boolean }) | undefined> {
    if (this.disposed) return undefined;
    const step = await this.deps.follow(ref, this.liveId);
    if (step.opened) this.tailStats.opened++;
    return step;
  }

  dispose(): void {
    this.disposed = true;
    if (this.tailTimer) clearTimeout(this.tailTimer);
    for (const d of this.disposables) d.dispose();
    this.parentWatch?.watcher.dispose();
    // After a step in flight (it may still follow, which would keep the state in the worker).
    void (this.tailing ?? Promise.resolve()).then(() => this.deps.unfollow(this.liveId));
    this.onDispose(this);
  }
}

/**
 * Watches a capture root for bodies of a session: its own folders (`own`) and day folders, the
 * ones there now and those created later (inotify through fs.watch, one level each: VS Code's
 * recursive watcher outside the workspace did not report them). A root that does not exist yet
 * is not watched.
 */
function watchCaptures(root: string, own: ReadonlySet<string>, changed: () => void): vscode.Disposable {
  const watchers = new Map<string, FSWatcher>();
  const folder = (name: string) => {
    if (watchers.has(name)) return;
    try {
      const w = watch(join(root, name), (_e, file) => {
        if (typeof file === 'string' && file.endsWith('.meta.json')) changed();
      });
      w.on('error', () => w.close());
      watchers.set(name, w);
    } catch {
      // not there (yet)
    }
  };
  const relevant = (name: string) => own.has(name) || DAY_FOLDER.test(name);
  try {
    const w = watch(root, (_e, name) => {
      if (typeof name === 'string' && relevant(name)) {
        folder(name);
        changed();
      }
    });
    w.on('error', () => w.close());
    watchers.set('', w);
    for (const name of own) folder(name);
    folder(folderName(null, Date.now()));
  } catch {
    // no capture root
  }
  return { dispose: () => watchers.forEach((w) => w.close()) };
}

function dirOf(p: string): string {
  return p.slice(0, p.lastIndexOf('/')) || '/';
}
function baseOf(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}
function titleOf(r: SessionReport): string {
  return `Timeline: ${r.title ?? r.id}`;
}

/** All open Timeline panels, by session key; also the serializer that restores them. */
export class TimelinePanels implements vscode.WebviewPanelSerializer, vscode.Disposable {
  private readonly panels = new Map<string, TimelinePanel>();
  /** Counts rule changes (`rejudge`): a panel whose report was analyzed before the last one is judged again once attached. */
  private rulesGeneration = 0;

  constructor(private readonly deps: TimelineDeps) {}

  /**
   * Every open panel judged again with the rules as they are now (the TTL or price overrides
   * changed), each keeping its selection; resolves when all have been sent their new report.
   * A panel being opened meanwhile is judged again once it is attached.
   */
  async rejudge(): Promise<void> {
    this.rulesGeneration++;
    await Promise.all([...this.panels.values()].map((p) => p.rejudge()));
  }

  /** The panel of a session, when open. */
  get(key: string): TimelinePanel | undefined {
    return this.panels.get(key);
  }

  /** The panel the user looks at, when it is a Timeline. */
  active(): TimelinePanel | undefined {
    return [...this.panels.values()].find((p) => p.panel.active);
  }

  get size(): number {
    return this.panels.size;
  }

  /** Opens (or reveals) the Timeline of a session, at a request when given. */
  async open(ref: SessionRef, requestIndex?: number): Promise<TimelinePanel | undefined> {
    const existing = this.panels.get(ref.key);
    if (existing) {
      existing.panel.reveal();
      if (requestIndex) existing.select(requestIndex);
      return existing;
    }
    const generation = this.rulesGeneration;
    const report = await this.deps.analyze(ref);
    if (!report) return undefined;
    // Opened (or restored) by another call meanwhile: one panel per session.
    const meanwhile = this.panels.get(ref.key);
    if (meanwhile) {
      meanwhile.panel.reveal();
      if (requestIndex) meanwhile.select(requestIndex);
      return meanwhile;
    }
    const panel = vscode.window.createWebviewPanel(VIEW_TYPE, titleOf(report), vscode.ViewColumn.Active, { enableScripts: true, enableFindWidget: true });
    return this.attach(panel, ref, report, requestIndex, generation);
  }

  /** `generation`: the rules generation `report` was analyzed in (an older one is judged again at once). */
  private attach(panel: vscode.WebviewPanel, ref: SessionRef, report: SessionReport, select: number | undefined, generation: number): TimelinePanel {
    const p = new TimelinePanel(panel, ref, report, this.deps, select, (gone) => {
      if (this.panels.get(ref.key) === gone) this.panels.delete(ref.key);
    });
    this.panels.set(ref.key, p);
    this.deps.log.info(`timeline opened: ${ref.path}${ref.host === 'opencode' ? ` (${ref.id})` : ''}, ${plural(report.requests.length, 'request')}`);
    if (generation !== this.rulesGeneration) void p.rejudge();
    return p;
  }

  /** Restores a panel after a window reload from the state the app saved (re-read from disk, never trusted). */
  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const st = WebviewStateSchema.safeParse(state);
    const generation = this.rulesGeneration;
    const ref = st.success ? await this.deps.find(st.data.sessionKey, st.data.sessionPath) : undefined;
    const report = ref ? await this.deps.analyze(ref, true).catch(() => undefined) : undefined;
    if (!ref || !report) {
      this.deps.log.warn('timeline: a panel from the last window could not be restored (its session is gone or unreadable)');
      panel.dispose();
      return;
    }
    // The session's Timeline was opened while this one was being restored: one panel per session.
    const open = this.panels.get(ref.key);
    if (open) {
      panel.dispose();
      open.panel.reveal();
      return;
    }
    this.attach(panel, ref, report, st.success ? st.data.selected?.requestIndex : undefined, generation);
  }

  /**
   * Writes the standalone HTML report of a session (the same app, inlined) where the user picks.
   * @returns the file written, or undefined when the user cancelled
   */
  async exportHtml(report: SessionReport): Promise<vscode.Uri | undefined> {
    const name = `${(report.title ?? report.id).replace(/[^\w.-]+/g, '-').slice(0, 60)}.prefix-lens.html`;
    const target = await vscode.window.showSaveDialog({
      title: 'Export HTML Report',
      defaultUri: vscode.Uri.joinPath(vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(homedir()), name),
      filters: { 'HTML report': ['html'] },
    });
    if (!target) return undefined;
    await this.writeHtml(report, target);
    return target;
  }

  /** Writes the standalone report of `report` to `target`. */
  async writeHtml(report: SessionReport, target: vscode.Uri): Promise<void> {
    // The packaged bundles carry no source-map comment (production build), so they are inlined as they are.
    const dist = vscode.Uri.joinPath(this.deps.extensionUri, 'dist').fsPath;
    const [script, style] = await Promise.all([readFile(`${dist}/webview.js`, 'utf8'), readFile(`${dist}/webview.css`, 'utf8')]);
    const assets = { script, style };
    await writeFile(target.fsPath, await htmlReport({ version: 1, sessions: [report] }, assets));
    this.deps.log.info(`HTML report written: ${target.fsPath}`);
  }

  dispose(): void {
    for (const p of [...this.panels.values()]) p.panel.dispose();
  }
}
