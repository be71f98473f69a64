/**
 * Prefix Lens VS Code extension: the shell over the core, the host readers (via the registry),
 * src/phux and the Timeline app. Activation only wires things up (views, commands, diagnostics,
 * the status-bar toggle); nothing is read or analyzed until a view or a command asks, and then in
 * the worker thread (analysisWorker.ts).
 */
import * as vscode from 'vscode';
import { pruneCache } from '../cache/prune.js';
import type { SessionRef } from '../hosts/registry.js';
import { fileRef } from './fileRef.js';
import { ActiveSessionStatus } from './activeSession.js';
import { AnalysisWorker, CancelledError } from './analysisWorker.js';
import { ContextToggle } from './contextToggle.js';
import { CaptureProxy, type CaptureStartOptions } from './captureProxy.js';
import { TranscriptDiagnostics, isTranscript } from './diagnostics.js';
import { RequestDiff } from './requestDiff.js';
import { FleetView } from './fleetView.js';
import { plural } from '../plural.js';
import { createLog, type Log } from './log.js';
import { pickSession } from './sessionPick.js';
import { SessionsView } from './sessionsView.js';
import { discoverOptions, ruleOverrides } from './settings.js';
import { SummaryCache } from './summaryCache.js';
import type { SessionReport } from '../report/json.js';
import { numberAt } from '../report/numbers.js';
import type { TimelinePanels } from './timelinePanel.js';

/** Every command the extension contributes (package.json `contributes.commands`). */
export const COMMANDS = [
  'prefixLens.openTimeline',
  'prefixLens.diagnoseSession',
  'prefixLens.diagnoseActive',
  'prefixLens.refreshSessions',
  'prefixLens.refreshFleet',
  'prefixLens.togglePhuxContextAwareness',
  'prefixLens.exportHtml',
  'prefixLens.showLog',
  'prefixLens.revealInTranscript',
  'prefixLens.compareRequests',
  'prefixLens.startCaptureProxy',
  'prefixLens.stopCaptureProxy',
  'prefixLens.toggleCaptureTerminals',
] as const;

/** What `activate` returns (the extension's exports): used by the extension-host tests. */
export interface PrefixLensApi {
  /** Wall time of `activate`, ms. */
  activationMs: number;
  extensionUri: vscode.Uri;
  log: Log;
  worker: AnalysisWorker;
  sessions: SessionsView;
  /** The Sessions view's tree (its `message` says which folders the listing could not read). */
  sessionsTree: vscode.TreeView<unknown>;
  /** The status-bar item of the session being written now. */
  status: ActiveSessionStatus;
  fleet: FleetView;
  diagnostics: TranscriptDiagnostics;
  toggle: ContextToggle;
  /** The capture proxy (commands Start/Stop Capture Proxy, terminal toggle, status bar). */
  capture: CaptureProxy;
  cache: SummaryCache;
  /** Analyzes one session under a cancellable progress notification. */
  analyze(ref: SessionRef): Promise<SessionReport | undefined>;
  /** The Timeline panels (loaded on first use). */
  timelines(): Promise<TimelinePanels>;
}

/**
 * `openTimeline`'s argument: a listed session (optionally at a request: the status bar's latest
 * break), a file path (optionally at a request), or nothing (pick).
 */
type TimelineTarget = SessionRef | { ref: SessionRef; requestIndex?: number } | { path: string; requestIndex?: number } | undefined;

/**
 * `compareRequests`' argument: the session (`ref`, or a file `path`; neither = the active
 * Timeline's, at its selected request, else a pick), the request
 * (absent = a pick of the session's compared requests) and the one to compare it with (absent =
 * the request it was matched with, else the one before it).
 */
interface CompareTarget {
  ref?: SessionRef;
  path?: string;
  requestIndex?: number;
  base?: number;
}

export function activate(context: vscode.ExtensionContext): PrefixLensApi {
  const t0 = performance.now();
  const log = createLog();
  const resultsDir = vscode.Uri.joinPath(context.globalStorageUri, 'results').fsPath;
  const worker = new AnalysisWorker(vscode.Uri.joinPath(context.extensionUri, 'dist').fsPath, (l) => log.info(l), resultsDir);
  // After an update the older cache versions are never read again.
  void pruneCache(resultsDir).then((removed) => removed.length && log.info(`result cache: removed ${plural(removed.length, 'stale item')}`));
  // A summary depends on the build and on the rule overrides too (TTLs and prices move verdicts and costs).
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '');
  const cache = new SummaryCache(context.globalStorageUri.fsPath, () => `${version}:${JSON.stringify(ruleOverrides())}`);
  void cache.load();
  const sessions = new SessionsView(worker, cache, log);
  const status = new ActiveSessionStatus(sessions);
  const fleet = new FleetView(log, () => sessions.sessions());
  const diagnostics = new TranscriptDiagnostics(worker, log);
  const requestDiff = new RequestDiff(worker, (key, path) => findRef(key, path));
  const toggle = new ContextToggle(context, log);
  const capture = new CaptureProxy(context, log);

  const sessionsTree = vscode.window.createTreeView('prefixLens.sessions', { treeDataProvider: sessions, showCollapseAll: true });
  const fleetTree = vscode.window.createTreeView('prefixLens.fleet', { treeDataProvider: fleet });
  // Folders the listing could not read are said above the tree, the details in the log.
  const onListed = sessions.onDidList(() => {
    const n = sessions.discoveryWarnings.length;
    sessionsTree.message = n ? `${plural(n, 'folder')} not read: see Output ▸ Prefix Lens` : undefined;
  });
  const onFleetVisibility = () => (fleetTree.visible ? fleet.start() : fleet.stop());
  onFleetVisibility();

  /** Analyzes one session under a cancellable progress notification; undefined when cancelled. */
  const analyze = async (ref: SessionRef): Promise<SessionReport | undefined> =>
    vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Prefix Lens: analyzing ${ref.title ?? ref.id}`, cancellable: true },
      async (_progress, token) => {
        try {
          const r = await worker.run({ op: 'analyze', ref, env: { ...process.env }, overrides: ruleOverrides() }, { token, urgent: true });
          log.info(`analyzed ${ref.path} in ${r.ms} ms`);
          return r.sessions.find((s) => s.id === ref.id) ?? r.sessions[0];
        } catch (e) {
          if (e instanceof CancelledError) {
            log.info(`analysis of ${ref.path} cancelled`);
            return undefined;
          }
          throw e;
        }
      },
    );

  const analyzeQuietly = async (ref: SessionRef): Promise<SessionReport | undefined> => {
    const r = await worker.run({ op: 'analyze', ref, env: { ...process.env }, overrides: ruleOverrides() });
    return r.sessions.find((s) => s.id === ref.id) ?? r.sessions[0];
  };

  // The Timeline panel code (and the protocol's zod schemas) loads on first use, not at activation.
  let panels: Promise<TimelinePanels> | undefined;
  const timelines = (): Promise<TimelinePanels> =>
    (panels ??= import('./timelinePanel.js').then((m) => {
      const p = new m.TimelinePanels({
        extensionUri: context.extensionUri,
        log,
        analyze: (ref, quiet) => (quiet ? analyzeQuietly(ref) : analyze(ref)),
        current: async (ref) => (await resolvePath(ref.path)).find((r) => r.key === ref.key),
        follow: async (ref, panel) => {
          const r = await worker.run({ op: 'live', ref, panel, env: { ...process.env }, overrides: ruleOverrides() }, { urgent: true });
          log.info(`live tail of ${ref.path}: ${r.opened ? 'read in full' : r.patch ? `${plural(r.patch.added.length, 'request')} added` : r.full ? 'judged again' : 'unchanged'} in ${r.ms} ms`);
          return r;
        },
        // Urgent: a panel that starts over waits for it, and a closed one's state is freed at once.
        unfollow: (panel) => worker.run({ op: 'live-close', panel }, { urgent: true }).then(() => undefined, () => undefined),
        find: findRef,
      });
      context.subscriptions.push(p);
      return p;
    }));
  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer('prefixLens.timeline', {
      deserializeWebviewPanel: async (panel, state) => (await timelines()).deserializeWebviewPanel(panel, state),
    }),
  );

  /** A session by registry key (or, without one, by file): listed, else recognized by the registry in its file, as Open Timeline does. */
  const findRef = async (key: string | undefined, path: string): Promise<SessionRef | undefined> => {
    const refs = await sessions.sessions();
    const found = refs.find((r) => (key ? r.key === key : r.path === path)) ?? refs.find((r) => r.path === path);
    return found ?? (await resolvePath(path)).find((r) => (key ? r.key === key : r.path === path));
  };

  /** The sessions the registry recognizes in one file or folder (any host), through the worker. */
  const resolvePath = (path: string): Promise<SessionRef[]> =>
    worker.run({ op: 'resolve', path, opts: discoverOptions() }, { urgent: true }).then(
      (r) => r.refs,
      (e: Error) => (log.warn(`cannot recognize ${path}: ${e.message}`), []),
    );

  /** The listed session a target names; a path not listed (a file opened by hand) is recognized by the registry (else read as Pi). */
  const resolveTarget = async (t: TimelineTarget, title: string): Promise<{ ref: SessionRef; requestIndex?: number } | undefined> => {
    if (!t) {
      const ref = await pickSession(sessions, title);
      return ref && { ref };
    }
    if ('key' in t) return { ref: t };
    if ('ref' in t) return { ref: t.ref, requestIndex: t.requestIndex };
    const found = await sessions.findByPath(t.path);
    if (found) return { ref: found, requestIndex: t.requestIndex };
    // A file outside the listed folders: recognized by the registry as the CLI does (any host).
    const resolved = await resolvePath(t.path);
    const named = resolved.find((r) => r.path === t.path) ?? resolved[0];
    if (named) return { ref: named, requestIndex: t.requestIndex };
    const { stat } = await import('node:fs/promises');
    const st = await stat(t.path);
    return { ref: fileRef(t.path, st), requestIndex: t.requestIndex };
  };

  const reportError = (what: string) => (e: unknown) => {
    const msg = e instanceof Error ? e.message : String(e);
    log.error(`${what}: ${msg}`);
    void vscode.window.showErrorMessage(`Prefix Lens: ${what}: ${msg}`);
  };

  const commands: Record<(typeof COMMANDS)[number], (...args: never[]) => unknown> = {
    'prefixLens.openTimeline': async (target?: TimelineTarget) => {
      const t = await resolveTarget(target, 'Open Timeline');
      if (!t) return undefined;
      const panel = await (await timelines()).open(t.ref, t.requestIndex);
      return panel?.current;
    },
    'prefixLens.diagnoseSession': async (target?: TimelineTarget) => {
      const t = await resolveTarget(target, 'Diagnose Session');
      if (!t) return;
      // A session in a transcript file of its own: opened, with its breaks in the Problems view.
      if (t.ref.path.endsWith('.jsonl') && t.ref.host !== 'capture') {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(t.ref.path));
        await vscode.window.showTextDocument(doc, { preview: true });
        const report = await diagnostics.diagnose(doc, undefined, t.ref);
        if (report) await vscode.commands.executeCommand('workbench.actions.view.problems');
        return report;
      }
      const report = await analyze(t.ref);
      if (report) void vscode.window.showInformationMessage(`Prefix Lens: ${report.title ?? report.id}: ${plural(report.totals.requests, 'request')}, ${plural(report.totals.breaks, 'break')}`);
      return report;
    },
    'prefixLens.diagnoseActive': async () => {
      const doc = vscode.window.activeTextEditor?.document;
      const notOne = () => void vscode.window.showWarningMessage('Prefix Lens: the active editor is not a session transcript (a .jsonl session file of Pi, Claude Code, Codex, PI-Desktop or BotHarness).');
      if (!doc || !isTranscript(doc)) return notOne();
      const report = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Prefix Lens: diagnosing the transcript', cancellable: true },
        (_p, token) => diagnostics.diagnose(doc, token).catch((e) => (e instanceof CancelledError ? undefined : Promise.reject(e))),
      );
      if (report === null) return notOne();
      if (report) {
        void vscode.window.showInformationMessage(`Prefix Lens: ${plural(report.totals.breaks, 'break')} in ${plural(report.totals.requests, 'request')}`);
        await vscode.commands.executeCommand('workbench.actions.view.problems');
      }
      return report;
    },
    'prefixLens.refreshSessions': () => sessions.refresh(),
    'prefixLens.refreshFleet': () => fleet.refresh(),
    'prefixLens.togglePhuxContextAwareness': () => toggle.toggle(),
    // Optional argument (scripts, tests): port, upstream values, capture folder.
    'prefixLens.startCaptureProxy': async (opts?: CaptureStartOptions) => {
      const url = await capture.start(opts);
      if (url && !opts) {
        void vscode.window
          .showInformationMessage(`Prefix Lens: capture proxy on ${url}. Point your agent at it (e.g. ANTHROPIC_BASE_URL=${url}), or route new terminals through it.`, 'Route New Terminals', 'Show Setup')
          .then((a) => {
            if (a === 'Route New Terminals') void capture.toggleTerminals(true);
            else if (a === 'Show Setup') log.show(true);
          });
      }
      return url;
    },
    'prefixLens.stopCaptureProxy': async () => {
      const n = await capture.stop();
      if (n === undefined) void vscode.window.showInformationMessage('Prefix Lens: the capture proxy is not running.');
      else sessions.refreshSoon(0);
      return n;
    },
    'prefixLens.toggleCaptureTerminals': (value?: boolean) => capture.toggleTerminals(value),
    // Arguments (optional): the session (else the active Timeline's, else a pick) and, for scripts and tests, the file to write (else a save dialog).
    'prefixLens.exportHtml': async (target?: TimelineTarget, to?: vscode.Uri) => {
      const tl = await timelines();
      let report = !target ? tl.active()?.current : undefined;
      if (!report) {
        const t = await resolveTarget(target, 'Export HTML Report');
        if (!t) return undefined;
        report = tl.get(t.ref.key)?.current ?? (await analyze(t.ref));
      }
      if (!report) return undefined;
      if (to) {
        await tl.writeHtml(report, to);
        return to;
      }
      const file = await tl.exportHtml(report);
      if (file) {
        void vscode.window.showInformationMessage(`Prefix Lens: report written to ${file.fsPath}`, 'Open').then((a) => a && vscode.env.openExternal(file));
      }
      return file;
    },
    'prefixLens.compareRequests': async (target: CompareTarget = {}) => {
      // No session named: the active Timeline's, at its selected request; else a pick.
      const shown = !target.ref && !target.path && panels ? (await timelines()).active() : undefined;
      const t = target.ref
        ? { ref: target.ref, requestIndex: target.requestIndex }
        : shown
          ? { ref: shown.ref, requestIndex: target.requestIndex ?? shown.selectedRequest }
          : await resolveTarget(target.path ? { path: target.path, requestIndex: target.requestIndex } : undefined, 'Compare Request with Matched');
      if (!t) return undefined;
      const report = (await timelines()).get(t.ref.key)?.current ?? diagnostics.reportFor(vscode.Uri.file(t.ref.path)) ?? (await analyze(t.ref));
      if (!report) return undefined;
      const index = t.requestIndex ?? (await pickCompared(report));
      if (index === undefined) return undefined;
      const req = report.requests.find((r) => r.index === index);
      const base = target.base ?? req?.matched ?? (index > 1 ? index - 1 : undefined);
      if (!req || base === undefined) {
        void vscode.window.showInformationMessage(`Prefix Lens: request #${req?.number ?? index} has no earlier request to compare with.`);
        return undefined;
      }
      return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Prefix Lens: rendering requests #${numberAt(report.requests, base)} and #${req.number}`, cancellable: true }, (_p, token) =>
        requestDiff.open(t.ref, report, base, index, token).catch((e) => (e instanceof CancelledError ? undefined : Promise.reject(e))),
      );
    },
    'prefixLens.showLog': () => log.show(true),
    'prefixLens.revealInTranscript': async (target?: SessionRef | { path: string; line?: number; row?: string }) => {
      if (!target) return;
      if (target.path.endsWith('.db')) {
        // Database rows have no line: say which row instead of opening a binary file.
        const row = 'row' in target && target.row ? ` (${target.row})` : '';
        void vscode.window.showInformationMessage(`Prefix Lens: this request is stored in ${target.path}${row}; OpenCode's database is not a text file.`);
        return;
      }
      const line = 'line' in target && target.line ? target.line : 1;
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(target.path));
      const pos = new vscode.Position(Math.max(0, line - 1), 0);
      await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos) });
    },
  };
  for (const [id, fn] of Object.entries(commands)) {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, (...args: never[]) => Promise.resolve((fn as (...a: never[]) => unknown)(...args)).catch(reportError(id.replace('prefixLens.', '')))),
    );
  }

  context.subscriptions.push(
    log,
    sessionsTree,
    onListed,
    fleetTree,
    fleetTree.onDidChangeVisibility(onFleetVisibility),
    sessions,
    status,
    fleet,
    diagnostics,
    requestDiff,
    toggle,
    capture,
    { dispose: () => worker.dispose() },
    { dispose: () => void cache.save().catch(() => undefined) },
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('prefixLens.sessionFolders') || e.affectsConfiguration('prefixLens.opencode') || e.affectsConfiguration('prefixLens.captureFolders')) sessions.refreshSoon(0);
      if (e.affectsConfiguration('prefixLens.phux') || e.affectsConfiguration('prefixLens.fleet')) void (fleetTree.visible && fleet.refresh());
      // The rules judge verdicts and costs: every result shown is judged again (the caches are keyed on them).
      if (e.affectsConfiguration('prefixLens.ttlSecondsOverrides') || e.affectsConfiguration('prefixLens.priceOverrides')) {
        sessions.resummarize();
        diagnostics.rejudge();
        void panels?.then((p) => p.rejudge()).catch(reportError('judge the open Timelines again'));
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      sessions.refreshSoon(0);
      onFleetVisibility();
    }),
  );
  const activationMs = performance.now() - t0;
  log.info(`activated in ${activationMs.toFixed(1)} ms (VS Code ${vscode.version}, workspace ${vscode.workspace.isTrusted ? 'trusted' : 'untrusted: nothing is run'})`);
  return { activationMs, extensionUri: context.extensionUri, log, worker, sessions, sessionsTree, status, fleet, diagnostics, toggle, capture, cache, analyze, timelines };
}

/** A quick pick of the requests of `report` that were compared with an earlier one, breaks first. */
async function pickCompared(report: SessionReport): Promise<number | undefined> {
  const compared = report.requests.filter((r) => r.matched !== null);
  if (!compared.length) {
    void vscode.window.showInformationMessage(`Prefix Lens: no request of ${report.title ?? report.id} was compared with an earlier one.`);
    return undefined;
  }
  const rank = (v: string) => (v === 'break' ? 0 : v === 'hit' ? 2 : 1);
  const items = [...compared]
    .sort((a, b) => rank(a.verdict) - rank(b.verdict) || a.index - b.index)
    .map((r) => ({ label: `${r.verdict === 'break' ? '$(error) ' : ''}#${r.number} ${r.verdict}`, description: `vs #${r.matchedNumber}${r.causes.length ? ` · ${r.causes.map((c) => c.kind).join(', ')}` : ''}`, detail: r.reason, index: r.index }));
  const pick = await vscode.window.showQuickPick(items, { title: 'Compare Request with Matched', placeHolder: `${report.title ?? report.id}: the request to open beside the one it was compared with`, matchOnDescription: true });
  return pick?.index;
}

export function deactivate(): void {
  // Everything is in context.subscriptions.
}
