/**
 * The loopback capture proxy: an HTTP server on 127.0.0.1 that forwards every request to the
 * upstream API and streams the answer back as it arrives, saving each model request's body byte
 * for byte with its meta (src/capture/store.ts).
 *
 * What the agent sees is what the upstream sent: status, status text, headers (hop-by-hop ones
 * aside, RFC 9110 §7.6.1) and body chunks are passed on as they come, with backpressure and no
 * buffering. The request body is forwarded chunk by chunk too; a copy is kept only to be saved.
 * Saving runs beside the forwarding and never delays or fails it. When the upstream cannot be
 * reached the agent gets a 502 whose JSON body (in the API's error shape) says why; when the
 * upstream breaks off mid-response the agent's connection is broken off the same way.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { MAX_JSON_DEPTH } from '../core/depth.js';
import { rootMember } from '../core/jsonspan.js';
import { FILE_LIMITS } from '../hosts/files.js';
import { header, sessionOf } from '../hosts/wireconversation.js';
import { displayUrl, parseUpstreams, routeOf, upstreamUrl, type UpstreamFamily } from './route.js';
import { redactHeaders, redactPath } from './redact.js';
import { CaptureStore, folderName, type Slot } from './store.js';
import { ResponseObserver } from './usage.js';

/** The proxy's default port (documented in the README, "Capture proxy"). */
export const DEFAULT_CAPTURE_PORT = 8711;
/** The only address the proxy listens on. */
export const CAPTURE_HOST = '127.0.0.1';

export { SESSION_HEADERS, sessionOf } from '../hosts/wireconversation.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the ones the proxy sets itself: never forwarded. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'expect']);

/** One request as the proxy recorded it (the saved meta plus where it went). */
export interface CaptureRecord {
  /** Folder and file base of the saved body, or null when it was not saved (not a model request, or saving failed). */
  slot: Slot | null;
  meta: Record<string, unknown>;
}

/** Options of `startCaptureServer`. */
export interface CaptureServerOptions {
  store: CaptureStore;
  /** Port on 127.0.0.1; 0 = any free port (read it from the result). Default DEFAULT_CAPTURE_PORT. */
  port?: number;
  /** Upstream base per family (default: the providers' API hosts; see route.ts). */
  upstreams?: Record<UpstreamFamily, URL>;
  /** Called after each model request's meta is saved (or failed to be). */
  onRecord?: (r: CaptureRecord) => void;
  /** Called with problems the user should know about (saving failures, once per kind; upstream errors). */
  onWarn?: (message: string) => void;
}

/** A running proxy. */
export interface CaptureServer {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  store: CaptureStore;
  /** Model requests seen (saved or not). */
  readonly requests: number;
  /** Stops listening, ends open connections and upstream keep-alive sockets. */
  close(): Promise<void>;
}

/**
 * Starts the proxy.
 * @throws the listen error (e.g. EADDRINUSE when the port is taken)
 */
export async function startCaptureServer(opts: CaptureServerOptions): Promise<CaptureServer> {
  const upstreams = opts.upstreams ?? parseUpstreams([]);
  const warn = opts.onWarn ?? (() => {});
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  let requests = 0;
  await opts.store.open();

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const receivedAtMs = Date.now();
    const url = req.url ?? '/';
    const route = routeOf(req.method ?? 'GET', url, req.headers);
    const target = upstreamUrl(upstreams[route.family], url);
    const session = sessionOf(req.headers);
    if (route.api) requests++;
    // The slot (folder made and listed) is found beside the forwarding, never before it.
    const slotP: Promise<Slot | null> = route.api ? opts.store.allocate(folderName(session?.value ?? null, receivedAtMs), route.api) : Promise.resolve(null);

    // Request: forwarded as it arrives; a bounded copy kept for the body file.
    const chunks: Buffer[] = [];
    let bodyBytes = 0;
    let keep = route.api !== null;
    /** The whole body once it ended (kept for the meta's model), when it was kept. */
    let whole: Buffer | null = null;
    const transport = target.protocol === 'https:' ? https : http;
    const up = transport.request(target, {
      method: req.method,
      headers: forwardHeaders(req.rawHeaders, target),
      agent: target.protocol === 'https:' ? agents.https : agents.http,
    });
    up.setNoDelay(true);
    // Forwarded first, copied second; the copy is hashed and written only once the answer's first
    // chunk has been passed on (or the exchange ended): no file system work between the request's
    // end and its first answer byte (the time-to-first-byte window).
    req.pipe(up);
    const bodyComplete = new Promise<boolean>((done) => {
      req.on('data', (c: Buffer) => {
        bodyBytes += c.length;
        if (!keep) return;
        if (bodyBytes > FILE_LIMITS.body) {
          keep = false;
          chunks.length = 0;
          warn(`request body over ${FILE_LIMITS.body} bytes: forwarded, not saved`);
        } else chunks.push(c);
      });
      req.on('end', () => {
        if (keep) whole = Buffer.concat(chunks);
        chunks.length = 0;
        done(keep);
      });
      req.on('error', () => done(false));
    });
    let bodySaved: Promise<boolean> | null = null;
    const saveBody = (): Promise<boolean> =>
      (bodySaved ??= bodyComplete.then(async (ok) => {
        const slot = await slotP;
        return ok && slot !== null && whole !== null ? opts.store.saveBody(slot, whole) : false;
      }));

    let status: number | null = null;
    let startedAtMs: number | null = null;
    let observer: ResponseObserver | null = null;
    let finished = false;
    const finish = async (error: string | null) => {
      if (finished) return;
      finished = true;
      const slot = await slotP;
      if (!slot || !route.api) {
        void observer?.end(); // releases a decompressor
        return;
      }
      const facts = observer ? await observer.end() : { usage: null, responseId: null };
      const saved = await saveBody();
      const body = saved ? whole : null;
      whole = null;
      chunks.length = 0;
      const meta: Record<string, unknown> = {
        n: slot.n,
        api: route.api,
        route: url.split('?')[0],
        method: req.method,
        url: redactPath(url),
        upstream: displayUrl(target),
        model: body ? topLevelString(body, 'model') : null,
        receivedAt: new Date(receivedAtMs).toISOString(),
        responseStartedAt: startedAtMs === null ? null : new Date(startedAtMs).toISOString(),
        responseEndedAt: new Date().toISOString(),
        status,
        usage: facts.usage,
        responseId: facts.responseId,
        sessionHeader: session?.name ?? null,
        sessionId: session?.value ?? null,
        headers: redactHeaders(req.headers),
        bodyBytes,
        bodySha256: body ? createHash('sha256').update(body).digest('hex') : null,
        bodySaved: saved,
      };
      if (facts.note) meta.usageNote = facts.note;
      if (error) meta.error = error;
      await opts.store.saveMeta(slot, meta);
      opts.onRecord?.({ slot: saved ? slot : null, meta });
    };

    up.on('response', (ures) => {
      status = ures.statusCode ?? 502;
      startedAtMs = Date.now();
      res.writeHead(status, ures.statusMessage, responseHeaders(ures.rawHeaders));
      res.flushHeaders();
      // Piped first, observed second: each chunk is written to the agent before it is parsed.
      ures.pipe(res);
      if (route.api) {
        observer = new ResponseObserver(route.api, header(ures.headers['content-type']), header(ures.headers['content-encoding']));
        const o = observer;
        ures.on('data', (c: Buffer) => o.push(c));
        ures.once('data', () => setImmediate(() => void saveBody()));
      }
      ures.on('end', () => void finish(null));
      ures.on('error', (e) => {
        res.destroy(e);
        void finish(`upstream response broke off: ${e.message}`);
      });
      ures.on('aborted', () => {
        res.destroy();
        void finish('upstream response broke off');
      });
    });
    up.on('error', (e) => {
      const why = `upstream ${displayUrl(target)} unreachable: ${(e as NodeJS.ErrnoException).code ?? e.message}`;
      if (!res.headersSent) {
        status = 502;
        const message = `prefix-lens capture: ${why}`;
        const body = route.family === 'anthropic' ? { type: 'error', error: { type: 'api_error', message } } : { error: { message, type: 'upstream_unreachable', code: null } };
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
        warn(why);
      } else res.destroy(e);
      void finish(why);
    });
    // The agent went away before the answer ended: stop the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) {
        up.destroy();
        void finish('the client closed the connection before the response ended');
      }
    });
  });
  server.on('clientError', (_e, socket) => socket.destroy());

  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? DEFAULT_CAPTURE_PORT, CAPTURE_HOST, () => {
      server.off('error', fail);
      ok();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${CAPTURE_HOST}:${port}`,
    store: opts.store,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
        agents.http.destroy();
        agents.https.destroy();
      }),
  };
}


/** Headers named in `Connection` are hop-by-hop too. */
function connectionListed(raw: string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'connection') for (const t of raw[i + 1].split(',')) out.add(t.trim().toLowerCase());
  return out;
}

/** The request's raw headers (case and order kept) minus hop-by-hop ones, with the upstream's `Host`. */
function forwardHeaders(raw: string[], target: URL): string[] {
  const listed = connectionListed(raw);
  const out: string[] = ['Host', target.host];
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i].toLowerCase();
    if (!HOP.has(k) && !listed.has(k)) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/** The upstream's raw response headers minus hop-by-hop ones. */
function responseHeaders(raw: string[]): string[] {
  const listed = connectionListed(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i].toLowerCase();
    if (!HOP.has(k) && !listed.has(k)) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/**
 * The string value of a top-level member of a JSON object, or null (not an object, no such member,
 * not a string, not JSON up to it). Scans the bytes up to that member (core/jsonspan.ts
 * rootMember) instead of parsing the whole body (hosts put `model` first; a parse of a large body
 * would hold up every other stream).
 */
export function topLevelString(body: Uint8Array, key: string): string | null {
  try {
    const v = rootMember(body, key, MAX_JSON_DEPTH);
    return v?.type === 'string' ? (JSON.parse(Buffer.from(body.buffer, body.byteOffset + v.start, v.end - v.start).toString('utf8')) as string) : null;
  } catch {
    return null;
  }
}
