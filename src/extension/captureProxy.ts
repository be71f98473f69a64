/**
 * The capture proxy inside the extension host: "Start Capture Proxy" / "Stop Capture Proxy", a
 * status-bar item while it runs (URL and the number of recorded requests), and the opt-in toggle
 * that points new integrated terminals at it through `context.environmentVariableCollection` (the
 * mechanism of the PHUX_CONTEXT_AWARENESS toggle): `ANTHROPIC_BASE_URL` and `OPENAI_BASE_URL`
 * (src/capture/setup.ts) are set only while the toggle is on AND the proxy runs, so a new terminal
 * never points an agent at a proxy that is not there. Nothing is set or started without the user's
 * action; in an untrusted workspace (restricted mode) neither the proxy nor the toggle runs.
 * The bodies go to the proxy's default folder ($XDG_STATE_HOME/prefix-lens/captures), where the
 * analysis finds them by itself (src/hosts/capturejoin.ts).
 */
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { parseUpstreams, type UpstreamFamily } from '../capture/route.js';
import type { CaptureServer } from '../capture/server.js';
import { baseUrlVariables, hostSetupText } from '../capture/setup.js';
import { CaptureStore, defaultCaptureDir } from '../capture/store.js';
import { plural } from '../plural.js';
import type { Log } from './log.js';
import { appendUntrusted, safeMarkdown } from './untrustedMarkdown.js';

const TERMINALS_KEY = 'prefixLens.captureTerminals';
/** The proxy's default port (src/capture/server.ts DEFAULT_CAPTURE_PORT; that module is not loaded before Start). */
const DEFAULT_PORT = 8711;

/**
 * The proxy server module: its own bundle, dist/capture.js, loaded at the first Start. It is the
 * only code of the extension that loads Node's network modules (http, https: to forward the
 * agent's own requests); extension.js and worker.js load none (the package test checks it).
 */
function serverModule(extensionPath: string): typeof import('../capture/server.js') {
  return createRequire(__filename)(join(extensionPath, 'dist', 'capture.js')) as typeof import('../capture/server.js');
}

/** Options of `start` (the command's optional argument; tests and scripts pass them). */
export interface CaptureStartOptions {
  /** Port on 127.0.0.1 (default: setting `prefixLens.capture.port`, 8711; 0 = any free port). */
  port?: number;
  /** `--upstream` values (`URL`, `anthropic=URL`, `openai=URL`); default: the environment's base URLs, else the providers'. */
  upstream?: string[];
  /** Capture root (default: $XDG_STATE_HOME/prefix-lens/captures). */
  out?: string;
}

export class CaptureProxy implements vscode.Disposable {
  private server: CaptureServer | null = null;
  private starting: Promise<CaptureServer | undefined> | null = null;
  private readonly item: vscode.StatusBarItem;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the proxy starts or stops and after each recorded request. */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: Log,
  ) {
    this.item = vscode.window.createStatusBarItem('prefixLens.captureProxy', vscode.StatusBarAlignment.Right, 99);
    this.item.name = 'Prefix Lens: capture proxy';
    this.item.command = 'prefixLens.stopCaptureProxy';
    // No proxy runs at activation: base URLs left in the persistent collection by an earlier window go.
    this.applyTerminals();
  }

  /** The running proxy's URL, or null. */
  get url(): string | null {
    return this.server?.url ?? null;
  }

  private count = 0;
  /** Model requests recorded (body and meta saved) since the proxy started (0 when stopped). */
  get recorded(): number {
    return this.server ? this.count : 0;
  }

  /** True when new terminals are to be pointed at the proxy while it runs. */
  get terminalsEnabled(): boolean {
    return this.context.globalState.get<boolean>(TERMINALS_KEY, false);
  }

  /** The status-bar item's text ('' when hidden). */
  get statusText(): string {
    return this.server ? this.item.text : '';
  }

  /** The status-bar item's tooltip (undefined when hidden), for tests. */
  get tooltip(): vscode.MarkdownString | undefined {
    return this.server && this.item.tooltip instanceof vscode.MarkdownString ? this.item.tooltip : undefined;
  }

  /**
   * Starts the proxy (once; a second call returns the running one). Refused in an untrusted
   * workspace. When the port is taken, a free one is used instead (and said so).
   * @returns the proxy URL, or undefined when it did not start (the user was told why)
   */
  async start(opts: CaptureStartOptions = {}): Promise<string | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Prefix Lens: the capture proxy does not run in restricted mode (untrusted workspace).');
      return undefined;
    }
    if (this.server) return this.server.url;
    this.starting ??= this.listen(opts).finally(() => (this.starting = null));
    return (await this.starting)?.url;
  }

  private async listen(opts: CaptureStartOptions): Promise<CaptureServer | undefined> {
    const root = opts.out ?? defaultCaptureDir(process.env, homedir());
    const store = new CaptureStore({ root, onWarn: (m) => this.warn(m) });
    let upstreams: Record<UpstreamFamily, URL>;
    try {
      upstreams = parseUpstreams(opts.upstream ?? this.environmentUpstreams());
    } catch (e) {
      void vscode.window.showErrorMessage(`Prefix Lens: ${(e as Error).message}`);
      return undefined;
    }
    const port = opts.port ?? vscode.workspace.getConfiguration('prefixLens').get<number>('capture.port', DEFAULT_PORT);
    this.count = 0;
    const onRecord = (r: { slot: unknown }) => {
      if (r.slot) this.count++;
      this.render();
      this.changed.fire();
    };
    let startCaptureServer: typeof import('../capture/server.js').startCaptureServer;
    try {
      ({ startCaptureServer } = serverModule(this.context.extensionUri.fsPath));
    } catch (e) {
      void vscode.window.showErrorMessage(`Prefix Lens: the capture proxy could not be loaded: ${(e as Error).message}`);
      return undefined;
    }
    let server: CaptureServer;
    try {
      server = await startCaptureServer({ store, port, upstreams, onRecord, onWarn: (m) => this.warn(m) });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) {
        void vscode.window.showErrorMessage(`Prefix Lens: the capture proxy could not start: ${(e as Error).message}`);
        return undefined;
      }
      server = await startCaptureServer({ store, port: 0, upstreams, onRecord, onWarn: (m) => this.warn(m) });
      this.log.info(`capture proxy: port ${port} is taken, listening on ${server.port} instead`);
    }
    this.server = server;
    this.log.info(`capture proxy: listening on ${server.url} → anthropic ${upstreams.anthropic.href}, openai ${upstreams.openai.href}; saving to ${root}`);
    for (const line of hostSetupText(server.url)) this.log.info(line);
    this.render();
    this.applyTerminals();
    this.changed.fire();
    return server;
  }

  /** The upstreams the user's own environment names (a gateway stays the upstream), else the defaults. */
  private environmentUpstreams(): string[] {
    const out: string[] = [];
    const own = (v: string | undefined) => v && !/^https?:\/\/127\.0\.0\.1:/.test(v);
    if (own(process.env.ANTHROPIC_BASE_URL)) out.push(`anthropic=${process.env.ANTHROPIC_BASE_URL!.replace(/\/+$/, '')}`);
    // OPENAI_BASE_URL ends in /v1 (the SDK appends /chat/completions); the proxy's paths keep their /v1.
    if (own(process.env.OPENAI_BASE_URL)) out.push(`openai=${process.env.OPENAI_BASE_URL!.replace(/\/+$/, '').replace(/\/v1$/, '')}`);
    return out;
  }

  /** Stops the proxy (terminal variables removed). @returns requests it recorded, or undefined when it was not running */
  async stop(): Promise<number | undefined> {
    await this.starting;
    const s = this.server;
    if (!s) return undefined;
    this.server = null;
    await s.close();
    const n = this.count;
    this.log.info(`capture proxy: stopped after ${plural(s.requests, 'request')}, ${n} recorded to ${s.store.root}`);
    this.render();
    this.applyTerminals();
    this.changed.fire();
    return n;
  }

  /**
   * Flips (or sets) the terminal toggle. Turning it on starts the proxy when it is not running.
   * Refused in an untrusted workspace. @returns the new state
   */
  async toggleTerminals(value = !this.terminalsEnabled): Promise<boolean> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Prefix Lens: pointing terminals at the capture proxy is disabled in restricted mode (untrusted workspace).');
      return false;
    }
    await this.context.globalState.update(TERMINALS_KEY, value);
    if (value && !this.server) await this.start();
    this.applyTerminals();
    this.log.info(`capture proxy for new terminals: ${value ? 'on' : 'off'}`);
    return value;
  }

  /** Sets or removes the base-URL variables of new terminals. */
  private applyTerminals(): void {
    const env = this.context.environmentVariableCollection;
    const vars = baseUrlVariables(this.server?.url ?? 'http://127.0.0.1');
    const on = this.server !== null && this.terminalsEnabled && vscode.workspace.isTrusted;
    for (const [k, v] of Object.entries(vars)) {
      if (on) env.replace(k, v);
      else env.delete(k);
    }
    void vscode.commands.executeCommand('setContext', 'prefixLens.captureProxyRunning', this.server !== null);
  }

  private render(): void {
    const s = this.server;
    if (!s) {
      this.item.hide();
      return;
    }
    const n = this.count;
    this.item.text = `$(record) capture ${n}`;
    // The URL is the server's own (`http://127.0.0.1:PORT`), a code span; the store folder is a
    // path from the environment or the command's caller, appended as text (in a code span, a
    // backtick in it ended the span and what followed it was read as Markdown).
    const md = safeMarkdown();
    md.appendMarkdown(`**Capture proxy on** at \`${s.url}\`: ${plural(n, 'request')} recorded to `);
    appendUntrusted(md, s.store.root);
    md.appendMarkdown('\n\n');
    md.appendMarkdown(this.terminalsEnabled ? 'New terminals get `ANTHROPIC_BASE_URL` and `OPENAI_BASE_URL` pointing here.\n\n' : 'Point your agent here (see the log for the line per host), or turn on "Capture Proxy for New Terminals".\n\n');
    md.appendMarkdown('Click to stop.');
    this.item.tooltip = md;
    this.item.show();
  }

  private warned = false;
  private warn(m: string): void {
    this.log.info(`capture proxy: ${m}`);
    if (this.warned) return;
    this.warned = true;
    void vscode.window.showWarningMessage(`Prefix Lens capture proxy: ${m}`);
  }

  dispose(): void {
    const s = this.server;
    this.server = null;
    void s?.close();
    this.item.dispose();
    this.changed.dispose();
  }
}
