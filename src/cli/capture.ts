/**
 * `prefix-lens capture`: runs the loopback capture proxy in the foreground until SIGINT/SIGTERM,
 * printing one line per recorded request. Exit codes: 0 stopped, 2 usage error or the port could
 * not be taken.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseUpstreams, type UpstreamFamily } from '../capture/route.js';
import { CAPTURE_HOST, DEFAULT_CAPTURE_PORT, startCaptureServer, type CaptureRecord } from '../capture/server.js';
import { hostSetupText } from '../capture/setup.js';
import { CaptureStore, DEFAULT_MAX_BYTES, defaultCaptureDir } from '../capture/store.js';
import { plural } from '../plural.js';
import { argsErrorText, safe } from './text.js';

/** The options `capture` accepts (each is in its usage and the README; test/unit/cli/usage-flags.test.ts). */
export const CAPTURE_OPTIONS = {
  port: { type: 'string' },
  upstream: { type: 'string', multiple: true },
  out: { type: 'string' },
  'max-mb': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `--help` text for a proxy at `url`. */
export function captureUsage(url = `http://${CAPTURE_HOST}:${DEFAULT_CAPTURE_PORT}`): string {
  return `usage:
  prefix-lens capture [--port N] [--upstream URL | --upstream anthropic=URL --upstream openai=URL]
                      [--out DIR] [--max-mb N] [--quiet]

Records the exact request bodies your agent sends (wire evidence) on their way to the provider:
listens on ${CAPTURE_HOST} only (--port, default ${DEFAULT_CAPTURE_PORT}; 0 = any free port, printed),
forwards each request to the upstream and streams the answer back unchanged. Upstream defaults:
Anthropic Messages (/…/messages) → https://api.anthropic.com, OpenAI Chat Completions and
Responses (/…/chat/completions, /…/responses) → https://api.openai.com; the request's path is
appended to the upstream URL. Saved to --out (default $XDG_STATE_HOME/prefix-lens/captures), one
folder per host session (session header) or per UTC day, folders 0700, files 0600, credentials
removed from the saved headers, oldest requests deleted above --max-mb (default ${DEFAULT_MAX_BYTES / 1024 / 1024}).
\`prefix-lens analyze\` finds the captured bodies of a session by itself (wire mode).

Point your agent at the proxy (one line per host):
${hostSetupText(url).join('\n')}`;
}

/** Runs the command; resolves with the exit code once stopped (`signal`, or SIGINT/SIGTERM when absent). */
export async function captureCommand(argv: string[], out: (s: string) => void, err: (s: string) => void, env: NodeJS.ProcessEnv = process.env, signal?: AbortSignal): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      options: CAPTURE_OPTIONS,
    });
  } catch (e) {
    err(`prefix-lens capture: ${argsErrorText(e)}\n${captureUsage()}`);
    return 2;
  }
  const v = args.values;
  if (v.help) {
    out(captureUsage());
    return 0;
  }
  const port = v.port === undefined ? DEFAULT_CAPTURE_PORT : Number(v.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    err(`prefix-lens capture: --port ${safe(String(v.port))}: not a port number (0-65535)`);
    return 2;
  }
  const maxMb = v['max-mb'] === undefined ? DEFAULT_MAX_BYTES / 1024 / 1024 : Number(v['max-mb']);
  if (!Number.isFinite(maxMb) || maxMb <= 0) {
    err(`prefix-lens capture: --max-mb ${safe(String(v['max-mb']))}: not a positive number`);
    return 2;
  }
  let upstreams: Record<UpstreamFamily, URL>;
  try {
    upstreams = parseUpstreams(v.upstream ?? []);
  } catch (e) {
    err(`prefix-lens capture: ${safe((e as Error).message)}`);
    return 2;
  }
  const root = v.out ? resolve(v.out) : defaultCaptureDir(env, homedir());
  const warn = (m: string) => err(`prefix-lens capture: warning: ${safe(m)}`);
  const store = new CaptureStore({ root, maxBytes: Math.round(maxMb * 1024 * 1024), onWarn: warn });
  let server;
  try {
    server = await startCaptureServer({ store, port, upstreams, onWarn: warn, onRecord: v.quiet ? undefined : (r) => out(recordLine(r)) });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    err(`prefix-lens capture: cannot listen on ${CAPTURE_HOST}:${port}: ${safe(code === 'EADDRINUSE' ? 'port in use (try --port 0)' : (e as Error).message)}`);
    return 2;
  }
  out(`prefix-lens capture: listening on ${server.url}`);
  out(`  upstreams: anthropic ${upstreams.anthropic.origin}${upstreams.anthropic.pathname.replace(/\/$/, '')}, openai ${upstreams.openai.origin}${upstreams.openai.pathname.replace(/\/$/, '')}`);
  out(`  saving to ${safe(root)} (cap ${maxMb} MiB)`);
  for (const line of hostSetupText(server.url)) out(line);
  const stop = signal ?? signalOnce();
  await new Promise<void>((done) => (stop.aborted ? done() : stop.addEventListener('abort', () => done(), { once: true })));
  await server.close();
  out(`prefix-lens capture: stopped after ${plural(server.requests, 'request')}, ${store.saved} saved${store.failures ? `, ${plural(store.failures, 'failed write')}` : ''}`);
  return 0;
}

function signalOnce(): AbortSignal {
  const c = new AbortController();
  const end = () => {
    process.off('SIGINT', end);
    process.off('SIGTERM', end);
    c.abort();
  };
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
  return c.signal;
}

/** One printed line per request: number, API, model, status, time, usage, where it went. */
export function recordLine(r: CaptureRecord): string {
  const m = r.meta;
  const ms = typeof m.responseEndedAt === 'string' && typeof m.receivedAt === 'string' ? Date.parse(m.responseEndedAt) - Date.parse(m.receivedAt) : NaN;
  const u = (m.usage ?? {}) as Record<string, unknown>;
  const usage = Object.entries(u)
    .filter(([, x]) => typeof x === 'number')
    .map(([k, x]) => `${k}=${x}`)
    .join(' ');
  const where = r.slot ? `${r.slot.dir}/${r.slot.base}.body.json` : 'not saved';
  return safe(`#${m.n} ${m.api} ${m.model ?? '?'} → ${m.status ?? '—'}${Number.isFinite(ms) ? ` ${ms} ms` : ''}${usage ? ` ${usage}` : ''}${m.error ? ` (${m.error})` : ''} ${where}`);
}
