/**
 * The two HTML shells of the timeline app (media/main.ts → dist/webview.js + dist/webview.css):
 * the VS Code Timeline panel (`webviewShellHtml`) and the standalone report's head and tail
 * (`standaloneHead` / `standaloneTail`, streamed by html.ts). Both mount the app into
 * `<div id="prefix-lens-app">`; both forbid everything by default (`default-src 'none'`).
 *
 * Pure string building: no fs, no vscode (the extension and the CLI each pass what they have).
 */
import { createHash } from 'node:crypto';
import { REPORT_ELEMENT_ID } from '../protocol.js';

/** Id of the element the app mounts into. */
export const APP_ELEMENT_ID = 'prefix-lens-app';

/** Escapes text for an HTML text node or a double-quoted attribute. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** What the VS Code panel passes in (all from `webview.cspSource` / `asWebviewUri` / a fresh nonce). */
export interface WebviewShellOptions {
  /** `webview.cspSource`: the origin local resources are served from. */
  cspSource: string;
  /** A fresh random nonce per render (base64 or hex, ≥ 128 bits). */
  nonce: string;
  /** `asWebviewUri(dist/webview.js)` as a string. */
  scriptUri: string;
  /** `asWebviewUri(dist/webview.css)` as a string. */
  styleUri: string;
  /** Document title (untrusted session titles are escaped). */
  title: string;
}

/**
 * The VS Code Timeline panel's HTML: CSP `default-src 'none'`, styles only from `cspSource`,
 * the script only with the nonce, no inline script or style, images only from `cspSource`.
 * The app posts `{type:'ready'}` and waits for a `load` message (src/protocol.ts).
 * @throws Error when the nonce is not plain base64/hex (it is put in an attribute and in the CSP)
 */
export function webviewShellHtml(o: WebviewShellOptions): string {
  if (!/^[A-Za-z0-9+/=_-]{16,}$/.test(o.nonce)) throw new Error('webviewShellHtml: the nonce must be ≥ 16 base64/hex characters');
  const csp = [
    "default-src 'none'",
    `img-src ${o.cspSource}`,
    `style-src ${o.cspSource}`,
    `font-src ${o.cspSource}`,
    `script-src 'nonce-${o.nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${cspAttr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(o.title)}</title>
<link rel="stylesheet" href="${escapeHtml(o.styleUri)}">
</head>
<body>
<div id="${APP_ELEMENT_ID}"></div>
<script nonce="${escapeHtml(o.nonce)}" src="${escapeHtml(o.scriptUri)}"></script>
</body>
</html>
`;
}

/** The bundle and stylesheet inlined into a standalone report. */
export interface WebviewAssets {
  /** dist/webview.js (an IIFE). */
  script: string;
  /** dist/webview.css. */
  style: string;
}

/** Escapes a CSP for a double-quoted attribute (its single quotes stay readable). */
function cspAttr(csp: string): string {
  return csp.replace(/[&"<>]/g, (c) => ({ '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' })[c]!);
}

/** `'sha256-…'` CSP source of an inline element's exact text. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * Head of the standalone report, up to and including the opening tag of the data element.
 * The inline style and the inline script (written by `standaloneTail`) are allowed by their
 * SHA-256 in the CSP; nothing else loads (`default-src 'none'`), so the file works offline.
 * @throws Error when the assets contain a closing tag that would end their element early
 */
export function standaloneHead(assets: WebviewAssets, title: string): string {
  if (/<\/style/i.test(assets.style)) throw new Error('webview.css contains "</style": it cannot be inlined');
  if (/<\/script|<!--/i.test(assets.script)) throw new Error('webview.js contains "</script" or "<!--": it cannot be inlined');
  const csp = ["default-src 'none'", `style-src ${cspHash(assets.style)}`, `script-src ${cspHash(assets.script)}`, "img-src data:"].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${cspAttr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="prefix-lens">
<title>${escapeHtml(title)}</title>
<style>${assets.style}</style>
</head>
<body>
<div id="${APP_ELEMENT_ID}"><noscript>This report needs JavaScript (it runs only its own inlined script, offline).</noscript></div>
<script type="application/json" id="${REPORT_ELEMENT_ID}">`;
}

/** Closes the data element and adds the inlined app script. */
export function standaloneTail(assets: WebviewAssets): string {
  return `</script>
<script>${assets.script}</script>
</body>
</html>
`;
}

/**
 * JSON for the inside of a `<script type="application/json">`: every `<` (and the line/paragraph
 * separators some parsers mishandle) as a \u escape, so no `</script>` or `<!--` in untrusted
 * text can end or alter the element. `JSON.parse` reads the escapes back unchanged.
 */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
