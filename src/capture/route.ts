/**
 * Which API a request to the capture proxy speaks, and where it is forwarded.
 *
 * Hosts append their own path to the base URL the user gives them (Anthropic SDK: `/v1/messages`
 * after a base without `/v1`; OpenAI SDK and the AI SDK: `/chat/completions` or `/responses` after
 * a base ending in `/v1`; reference/pi.md §3, reference/opencode.md, reference/claude-code-codex.md),
 * so the route is told by the path's end and the upstream URL is the upstream base followed by the
 * request's path and query, unchanged. Pure: no I/O.
 */
import type { WireApi } from '../core/wire.js';

/** Provider family of a route: picks the default upstream. */
export type UpstreamFamily = 'anthropic' | 'openai';

/** Default upstream per family: the providers' public API hosts. */
export const DEFAULT_UPSTREAMS: Readonly<Record<UpstreamFamily, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com',
};

/** One routed request: the API (null = forwarded but not a model request, so not saved) and the family. */
export interface Route {
  api: WireApi | null;
  family: UpstreamFamily;
}

/**
 * The route of a request from its method, path and headers.
 * `/…/messages` → Anthropic Messages, `/…/chat/completions` → OpenAI Chat Completions,
 * `/…/responses` → OpenAI Responses (POST only). Anything else (`GET /v1/models`,
 * `/v1/messages/count_tokens`) is forwarded unsaved, to the Anthropic upstream when the request
 * carries an Anthropic header (`anthropic-version`, `x-api-key`), else to the OpenAI one.
 */
export function routeOf(method: string, url: string, headers: Record<string, string | string[] | undefined>): Route {
  const path = url.split('?')[0].replace(/\/+$/, '');
  if (method === 'POST') {
    if (/\/messages$/.test(path)) return { api: 'anthropic-messages', family: 'anthropic' };
    if (/\/chat\/completions$/.test(path)) return { api: 'openai-completions', family: 'openai' };
    if (/\/responses$/.test(path)) return { api: 'openai-responses', family: 'openai' };
  }
  const anthropic = headers['anthropic-version'] !== undefined || headers['x-api-key'] !== undefined || /\/messages(\/|$)/.test(path);
  return { api: null, family: anthropic ? 'anthropic' : 'openai' };
}

/**
 * Parses `--upstream` values: `URL` (every family) or `anthropic=URL` / `openai=URL`.
 * @returns the upstream base per family, defaults filled in
 * @throws Error for a value that is not an http(s) URL or names an unknown family
 */
export function parseUpstreams(values: readonly string[]): Record<UpstreamFamily, URL> {
  const out: Record<UpstreamFamily, URL> = { anthropic: new URL(DEFAULT_UPSTREAMS.anthropic), openai: new URL(DEFAULT_UPSTREAMS.openai) };
  for (const v of values) {
    const m = /^(anthropic|openai)=(.*)$/.exec(v);
    if (!m && /^[a-z]+=/.test(v)) throw new Error(`--upstream ${v}: unknown family (anthropic=URL or openai=URL)`);
    const url = parseBase(m ? m[2] : v);
    if (m) out[m[1] as UpstreamFamily] = url;
    else out.anthropic = out.openai = url;
  }
  return out;
}

function parseBase(s: string): URL {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new Error(`--upstream ${s}: not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--upstream ${s}: not an http or https URL`);
  if (url.search || url.hash) throw new Error(`--upstream ${s}: a base URL has no query or fragment`);
  return url;
}

/** The upstream URL of a request: the base's origin and path, then the request's path and query. */
export function upstreamUrl(base: URL, requestUrl: string): URL {
  const u = new URL(base.href);
  const basePath = u.pathname.replace(/\/+$/, '');
  const q = requestUrl.indexOf('?');
  u.pathname = basePath + (q < 0 ? requestUrl : requestUrl.slice(0, q));
  u.search = q < 0 ? '' : requestUrl.slice(q);
  return u;
}

/** A URL as shown and saved: no user info, no query (both may hold credentials). */
export function displayUrl(u: URL): string {
  return `${u.protocol}//${u.host}${u.pathname}`;
}
