/**
 * The standalone HTML report (`prefix-lens analyze --html FILE`): one self-contained file with the
 * timeline app inlined and the version-1 view model in a non-executing
 * `<script type="application/json" id="prefix-lens-report">` element. Opens from disk offline.
 *
 * The writer is incremental: the head is written first, then each session as it is analyzed, then
 * the tail, so a caller that analyzes sessions one at a time never holds the whole report.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Report, SessionReport } from './json.js';
import { scriptSafeJson, standaloneHead, standaloneTail, type WebviewAssets } from './webviewHtml.js';

export type { WebviewAssets } from './webviewHtml.js';

/** A sink for chunks of the file; the writer awaits it before writing the next chunk. */
export type ChunkWriter = (chunk: string) => Promise<void> | void;

/** The incremental writer of one report file. Call `session` for each session, then `end` once. */
export interface HtmlReportWriter {
  /** Writes one session of the report (the head first, on the first call). */
  session(s: SessionReport): Promise<void>;
  /** Writes what is left (the head too when no session was written); further calls throw. */
  end(): Promise<void>;
}

/**
 * Creates the writer. The document's title is fixed by the head, which is written before any
 * session is known: `title` (default "Prefix Lens report").
 * @throws Error (from `session`/`end`) after `end`, and whatever `write` throws
 */
export function createHtmlReportWriter(write: ChunkWriter, assets: WebviewAssets, title = 'Prefix Lens report'): HtmlReportWriter {
  let count = 0;
  let started = false;
  let ended = false;
  const start = async () => {
    if (started) return;
    started = true;
    await write(`${standaloneHead(assets, title)}{"version":1,"sessions":[`);
  };
  return {
    async session(s) {
      if (ended) throw new Error('createHtmlReportWriter: session() after end()');
      await start();
      // Sessions after the first start with the separating comma.
      let comma = count++ > 0;
      for (const chunk of sessionChunks(s)) {
        await write(comma ? `,${chunk}` : chunk);
        comma = false;
      }
    },
    async end() {
      if (ended) throw new Error('createHtmlReportWriter: end() called twice');
      await start();
      ended = true;
      await write(`]}${standaloneTail(assets)}`);
    },
  };
}

/** Characters of request JSON gathered into one chunk. */
const CHUNK_CHARS = 64 * 1024;

/**
 * `scriptSafeJson(s)` in chunks of whole requests (at most ~64 K characters each, or one request):
 * the same characters in the same order, but no string holds more than a chunk, so a session of
 * any length streams (one string of a 40,000-request session was ~50 MB, and V8 strings end at
 * ~512 M characters).
 */
export function* sessionChunks(s: SessionReport): Generator<string> {
  const obj = s as unknown as Record<string, unknown>;
  let buf = '{';
  let sep = '';
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    // JSON.stringify leaves out members whose value it cannot write.
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    buf += `${sep}${scriptSafeJson(k)}:`;
    sep = ',';
    if (k === 'requests' && Array.isArray(v)) {
      buf += '[';
      for (let i = 0; i < v.length; i++) {
        buf += `${i ? ',' : ''}${scriptSafeJson(v[i] ?? null)}`;
        if (buf.length >= CHUNK_CHARS) {
          yield buf;
          buf = '';
        }
      }
      buf += ']';
    } else buf += scriptSafeJson(v);
  }
  yield `${buf}}`;
}

/** The whole report as one HTML string (for a report already in memory). */
export async function htmlReport(report: Report, assets: WebviewAssets, title?: string): Promise<string> {
  const parts: string[] = [];
  const w = createHtmlReportWriter((c) => void parts.push(c), assets, title ?? reportTitle(report));
  for (const s of report.sessions) await w.session(s);
  await w.end();
  return parts.join('');
}

/** "Prefix Lens — <session title or id>" for one session, "Prefix Lens — N sessions" for several. */
export function reportTitle(report: Report): string {
  const [s] = report.sessions;
  if (report.sessions.length === 1) return `Prefix Lens — ${s.title ?? `${s.host} ${s.id}`}`;
  return `Prefix Lens — ${report.sessions.length} sessions`;
}

/**
 * Loads dist/webview.js and dist/webview.css. `dir` defaults to the folder of the running bundle
 * (dist/cli.js sits beside them), then `<package root>/dist`.
 * @throws Error naming the folder when the assets are missing (run `npm run build`)
 */
export function loadWebviewAssets(dir?: string): WebviewAssets {
  const candidates = dir ? [dir] : [__dirname, join(dirname(__dirname), 'dist'), join(dirname(dirname(__dirname)), 'dist')];
  for (const d of candidates) {
    const js = join(d, 'webview.js');
    const css = join(d, 'webview.css');
    if (existsSync(js) && existsSync(css)) {
      // The source map comment points at a file the standalone report does not carry.
      const script = readFileSync(js, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
      const style = readFileSync(css, 'utf8').replace(/\n\/\*# sourceMappingURL=\S+ \*\/\s*$/, '\n');
      return { script, style };
    }
  }
  throw new Error(`the timeline app (webview.js, webview.css) is not in ${candidates[0]}: run "npm run build"`);
}
