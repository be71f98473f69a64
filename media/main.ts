/**
 * Entry of the Timeline webview app (bundled to dist/webview.js). Runs in the VS Code Timeline
 * panel (messages, src/protocol.ts) or in the standalone HTML report (data element).
 */
import './zodConfig.js';
import { App } from './app.js';
import { h } from './dom.js';
import { standaloneHost, vscodeHost } from './host.js';

function start(): void {
  const root = document.getElementById('prefix-lens-app');
  if (!root) return;
  const host = vscodeHost() ?? standaloneHost();
  document.documentElement.dataset.host = host.kind;
  try {
    const app = new App(root, host);
    // User-timing marks (read by `npm run bench:timeline`): message in hand → rendered.
    host.start((m) => {
      performance.mark('prefix-lens:message');
      app.handle(m);
      performance.mark('prefix-lens:rendered');
    });
  } catch (e) {
    root.replaceChildren(h('p', { class: 'pl-error', role: 'alert' }, `Prefix Lens could not show this report: ${(e as Error).message}`));
  }
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
