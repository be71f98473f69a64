/**
 * The Fleet view (`prefixLens.fleet`): phux panes grouped by session and window, with lifecycle
 * and attention icons (src/phux/poller.ts over `phux agent list --json`). Polls only while the view
 * is visible; phux absent / stopped / slow are calm one-line states. In an untrusted workspace
 * nothing is run. A pane whose cwd is the project of a known session opens that session's Timeline.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { PhuxAgentRow } from '../phux/agentList.js';
import type { FleetResult } from '../phux/client.js';
import type { FleetPoller } from '../phux/poller.js';
import type { SessionRef } from '../hosts/registry.js';
import { plural } from '../plural.js';
import type { Log } from './log.js';
import { fleetPollIntervalMs, phuxPath } from './settings.js';

export type FleetNode =
  | { kind: 'message'; text: string; icon: string; tooltip?: string }
  | { kind: 'session'; name: string; panes: PhuxAgentRow[] }
  | { kind: 'window'; session: string; name: string; panes: PhuxAgentRow[] }
  | { kind: 'pane'; pane: PhuxAgentRow };

const STATE_ICON: Record<string, [string, string | undefined]> = {
  working: ['sync~spin', 'charts.blue'],
  blocked: ['bell-dot', 'problemsWarningIcon.foreground'],
  idle: ['circle-large-outline', undefined],
  done: ['pass', 'testing.iconPassed'],
  unknown: ['question', undefined],
};

export class FleetView implements vscode.TreeDataProvider<FleetNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<FleetNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private poller: FleetPoller | undefined;
  private result: FleetResult | undefined;
  /** Number of phux calls made, for the log and the restricted-mode test. */
  calls = 0;

  constructor(
    private readonly log: Log,
    private readonly sessions: () => Promise<SessionRef[]>,
  ) {}

  /** Starts polling (the view became visible); does nothing in an untrusted workspace. */
  start(): void {
    this.wanted = true;
    if (this.poller?.isRunning || !vscode.workspace.isTrusted) {
      this.changed.fire(undefined);
      return;
    }
    this.starting ??= this.startPoller().finally(() => (this.starting = undefined));
  }

  private starting: Promise<void> | undefined;
  /** The view is visible (polling wanted); checked again when the lazy start finishes. */
  private wanted = false;

  private async startPoller(): Promise<void> {
    // Loaded on first use: the phux client brings zod and execa, which activation does not need.
    const [{ fetchFleet }, { FleetPoller }] = await Promise.all([import('../phux/client.js'), import('../phux/poller.js')]);
    const bin = phuxPath();
    if (!bin) return;
    this.poller = new FleetPoller({
      intervalMs: fleetPollIntervalMs(),
      fetch: async () => {
        this.calls++;
        const r = await fetchFleet({ bin });
        this.log.debug(`phux agent list --json: ${r.state} in ${r.elapsedMs} ms (${plural(r.panes.length, 'pane')})`);
        return r;
      },
      onChange: (r) => {
        this.result = r;
        this.log.info(`fleet: ${r.state}${r.state === 'ok' ? `, ${plural(r.panes.length, 'pane')}` : `: ${r.message}`} (${r.elapsedMs} ms)`);
        this.changed.fire(undefined);
      },
    });
    if (this.wanted) this.poller.start();
  }

  /** Stops polling (the view was hidden). */
  stop(): void {
    this.wanted = false;
    this.poller?.stop();
  }

  /** Polls once now (command "Refresh Fleet"). */
  async refresh(): Promise<void> {
    this.stop();
    this.poller = undefined;
    this.result = undefined;
    this.changed.fire(undefined);
    this.start();
    await this.starting;
    const poller = this.poller as FleetPoller | undefined;
    await poller?.settled();
  }

  get current(): FleetResult | undefined {
    return this.result;
  }

  getChildren(node?: FleetNode): FleetNode[] {
    if (!node) {
      if (!vscode.workspace.isTrusted) {
        return [{ kind: 'message', text: 'Restricted mode: phux is not run in an untrusted workspace', icon: 'shield' }];
      }
      const r = this.result;
      if (!r) return [{ kind: 'message', text: 'Asking phux…', icon: 'loading~spin' }];
      if (r.state === 'not-installed') return [{ kind: 'message', text: 'phux not installed', icon: 'circle-slash', tooltip: r.message }];
      if (r.state === 'not-running') return [{ kind: 'message', text: 'phux not running', icon: 'debug-disconnect', tooltip: r.message }];
      // The client words it with the deadline it used ("phux did not answer in 1 s").
      if (r.state === 'timeout') return [{ kind: 'message', text: r.message, icon: 'clock', tooltip: `${r.message} (asked again every poll)` }];
      if (r.state === 'invalid') return [{ kind: 'message', text: 'phux gave an answer this version cannot read', icon: 'warning', tooltip: r.message }];
      if (!r.panes.length) return [{ kind: 'message', text: 'No agent panes', icon: 'info' }];
      const sessions = new Map<string, PhuxAgentRow[]>();
      for (const p of r.panes) sessions.set(p.session, [...(sessions.get(p.session) ?? []), p]);
      return [...sessions].map(([name, panes]) => ({ kind: 'session', name, panes }));
    }
    if (node.kind === 'session') {
      const windows = new Map<string, PhuxAgentRow[]>();
      for (const p of node.panes) windows.set(p.window, [...(windows.get(p.window) ?? []), p]);
      return [...windows].map(([name, panes]) => ({ kind: 'window', session: node.name, name, panes }));
    }
    if (node.kind === 'window') return node.panes.map((pane) => ({ kind: 'pane', pane }));
    return [];
  }

  async getTreeItem(node: FleetNode): Promise<vscode.TreeItem> {
    if (node.kind === 'message') {
      const item = new vscode.TreeItem(node.text);
      item.iconPath = new vscode.ThemeIcon(node.icon);
      return item;
    }
    if (node.kind === 'session' || node.kind === 'window') {
      const item = new vscode.TreeItem(node.name, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `${node.kind}:${node.kind === 'window' ? `${node.session}/` : ''}${node.name}`;
      item.iconPath = new vscode.ThemeIcon(node.kind === 'session' ? 'terminal' : 'window');
      const attention = node.panes.filter((p) => p.attention === 'high' || p.state === 'blocked').length;
      item.description = `${plural(node.panes.length, 'pane')}${attention ? ` · ${attention} need attention` : ''}`;
      return item;
    }
    const p = node.pane;
    const item = new vscode.TreeItem(`${p.terminal} ${p.agent.label}`);
    item.id = `pane:${p.terminal}`;
    const [icon, color] = p.attention === 'high' ? ['bell-dot', 'problemsErrorIcon.foreground'] : (STATE_ICON[p.state] ?? STATE_ICON.unknown);
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    item.description = `${p.state}${p.attention !== 'none' ? ` · attention ${p.attention}` : ''}${p.cwd ? ` · ${basename(p.cwd)}` : ''}`;
    const ref = p.cwd ? (await this.sessions()).find((s) => s.project === p.cwd) : undefined;
    if (ref) {
      item.command = { command: 'prefixLens.openTimeline', title: 'Open Timeline', arguments: [ref] };
      item.contextValue = 'pane.session';
    }
    return item;
  }

  /**
   * A row's hover, built when VS Code asks for it (the row is hovered; getTreeItem leaves
   * `tooltip` unset). phux output (title, cwd, explanation) is untrusted: every hover here is a
   * plain string, which VS Code shows as text.
   */
  resolveTreeItem(item: vscode.TreeItem, node: FleetNode): vscode.TreeItem {
    if (node.kind === 'message') item.tooltip = node.tooltip;
    else if (node.kind === 'pane') {
      const p = node.pane;
      item.tooltip = `${p.title ?? p.terminal}\n${p.agent.kind} · ${p.state} (confidence ${p.confidence}) · attention ${p.attention}\n${p.cwd ?? 'cwd unknown'}\n${p.explanation}`;
    }
    return item;
  }

  dispose(): void {
    this.stop();
    this.changed.dispose();
  }
}
