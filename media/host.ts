/**
 * The two hosts the app runs in: the VS Code Timeline panel (messages, src/protocol.ts) and the
 * standalone HTML report (the report in a JSON data element). Everything received is checked
 * with the protocol's zod schemas; what does not parse is dropped and logged.
 */
import './zodConfig.js';
import {
  FromWebviewMessageSchema,
  MessageType,
  REPORT_ELEMENT_ID,
  ToWebviewMessageSchema,
  WebviewStateSchema,
  type FromWebviewMessage,
  type ToWebviewMessage,
  type WebviewState,
} from '../src/protocol.js';
import type { Report } from '../src/report/json.js';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What the app needs from its host. */
export interface Host {
  kind: 'vscode' | 'standalone';
  /** Sends a message to the extension (no-op standalone). */
  post(message: FromWebviewMessage): void;
  /** Saved state (VS Code only), validated; undefined when absent or invalid. */
  state(): WebviewState | undefined;
  saveState(state: WebviewState): void;
  /** Starts listening; `onMessage` gets only messages that parse. */
  start(onMessage: (m: ToWebviewMessage) => void): void;
}

/** The VS Code host, or null outside VS Code. */
export function vscodeHost(): Host | null {
  if (typeof acquireVsCodeApi !== 'function') return null;
  const api = acquireVsCodeApi();
  return {
    kind: 'vscode',
    post(message) {
      const checked = FromWebviewMessageSchema.safeParse(message);
      if (!checked.success) {
        console.error('prefix-lens: not sending an invalid message', checked.error.message);
        return;
      }
      api.postMessage(checked.data);
    },
    state() {
      const s = WebviewStateSchema.safeParse(api.getState());
      return s.success ? s.data : undefined;
    },
    saveState(state) {
      api.setState(state);
    },
    start(onMessage) {
      window.addEventListener('message', (event: MessageEvent) => {
        const m = ToWebviewMessageSchema.safeParse(event.data);
        if (!m.success) {
          console.error('prefix-lens: dropped a message that does not match the protocol', m.error.message);
          return;
        }
        onMessage(m.data);
      });
      this.post({ type: MessageType.Ready });
    },
  };
}

/** The standalone host: reads the report from the data element and "loads" it once. */
export function standaloneHost(): Host {
  return {
    kind: 'standalone',
    post() {},
    state: () => undefined,
    saveState() {},
    start(onMessage) {
      const el = document.getElementById(REPORT_ELEMENT_ID);
      if (!el) throw new Error(`no #${REPORT_ELEMENT_ID} element: this page is not a Prefix Lens report`);
      performance.mark('prefix-lens:parse');
      const report = JSON.parse(el.textContent ?? '') as Report;
      const m = ToWebviewMessageSchema.safeParse({ type: 'load', report, live: false });
      if (!m.success) throw new Error(`the report in this page is not a version-1 Prefix Lens report: ${m.error.message}`);
      onMessage(m.data);
    },
  };
}
