/**
 * Capture proxy overhead (issue 15 target: < 2 ms added to time-to-first-byte, no extra buffering).
 * Prints figures; asserts nothing (speed is not a test).
 *
 *   npm run bench:capture [-- --requests N]
 *
 * 1. TTFB: the same real Pi request body (test/fixtures/pi/main, Anthropic Messages, 10 KB) POSTed N
 *    times directly to the scripted provider (scripts/record/fake-provider.mjs, a child process) and
 *    N times through the proxy, alternating, keep-alive on both paths; TTFB = request start → first
 *    response byte, ms. Reported: median and p95 of each path and of the per-pair difference, for
 *    the proxy in this process (startCaptureServer, as the extension host runs it: the client and
 *    the proxy share one event loop) and as its own process (`node dist/cli.js capture`, as the CLI
 *    runs it; built when missing), each saving to a temp folder. Also printed: this process's
 *    event-loop delay during the in-process run (perf_hooks; a blocked or descheduled loop shows
 *    there) and the load average (the machine is shared: the direct path's own p95 moves with it).
 * 2. Streaming: an upstream (child process) that writes 20 SSE events 20 ms apart; for each event, the
 *    delay between its arrival directly and through the proxy (ms, median and max over all events
 *    of 20 streams): buffering would show as delays growing along the stream.
 *
 *   npm run bench:capture -- --join N
 *
 * 3. Instead of 1 and 2: the join of a transcript with its captured bodies (issue 9 scaling, README
 *    "Scaling per host"): a Claude Code 2.1.328 session of N, 2N and 4N requests with its capture
 *    folder (scripts/bench/capture-session.ts writeClaudeJoinSession: an HTTP 500 attempt before
 *    every 10th turn), each analyzed as its own process (`node dist/cli.js analyze FILE --json
 *    --no-cache`, built when missing) three ways: `--requests DIR` with response ids in the metas,
 *    `--requests DIR` without them (every body matched by its prefix hash), and `--captures ROOT`
 *    (the capture join, ids in the metas). Per run: CPU (user + system, all threads) and peak RSS
 *    (VmHWM) from scripts/bench/probe.cjs, wall time, the output's SHA-256 (to compare a change's
 *    output with the one before); then each figure's ratio to the one at N (linear: ×2 and ×4; the
 *    bodies' bytes grow a little faster, each body holding the conversation so far).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseUpstreams } from '../src/capture/route.js';
import { startCaptureServer } from '../src/capture/server.js';
import { CaptureStore } from '../src/capture/store.js';
import { writeClaudeJoinSession } from './bench/capture-session.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '300' }, join: { type: 'string' } } });
const N = Number(values.requests);
const tmp = mkdtempSync(join(tmpdir(), 'prefix-lens-bench-capture-'));
const children: ChildProcess[] = [];

async function child(args: string[], portFile: string): Promise<number> {
  const c = spawn(process.execPath, [...args], { stdio: 'ignore' });
  children.push(c);
  for (let i = 0; i < 400 && !(existsSync(portFile) && readFileSync(portFile, 'utf8')); i++) await new Promise((r) => setTimeout(r, 25));
  return Number(readFileSync(portFile, 'utf8'));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
/** POSTs and resolves with the ms of the first byte and of each chunk, from the request's start. */
function timed(url: string, body: Buffer): Promise<{ ttfb: number; chunks: number[] }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length }, agent }, (res) => {
      const chunks: number[] = [];
      res.on('data', () => chunks.push(performance.now() - t0));
      res.on('end', () => done({ ttfb: chunks[0], chunks }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const f = (x: number) => x.toFixed(2);

async function main(): Promise<void> {
  const providerPort = await child(['scripts/record/fake-provider.mjs', '--out', join(tmp, 'provider'), '--port-file', join(tmp, 'p1')], join(tmp, 'p1'));
  const direct = `http://127.0.0.1:${providerPort}`;
  const store = new CaptureStore({ root: join(tmp, 'captures') });
  const proxy = await startCaptureServer({ store, port: 0, upstreams: parseUpstreams([direct]) });
  const body = readFileSync('test/fixtures/pi/main/requests/005-anthropic-messages.body.json');

  const load = () => loadavg().map((x) => x.toFixed(1)).join(' / ');
  /** N alternating pairs (after 20 to warm up); returns the TTFBs of both paths. */
  const pairs = async (via: string) => {
    for (let i = 0; i < 20; i++) {
      await timed(`${direct}/v1/messages`, body);
      await timed(`${via}/v1/messages`, body);
    }
    const d: number[] = [];
    const p: number[] = [];
    for (let i = 0; i < N; i++) {
      d.push((await timed(`${direct}/v1/messages`, body)).ttfb);
      p.push((await timed(`${via}/v1/messages`, body)).ttfb);
    }
    return { d, p, added: p.map((x, i) => x - d[i]) };
  };
  const report = (label: string, r: { d: number[]; p: number[]; added: number[] }) => {
    console.log(`  ${label}:`);
    console.log(`    direct        median ${f(pct(r.d, 50))} ms, p95 ${f(pct(r.d, 95))} ms`);
    console.log(`    via capture   median ${f(pct(r.p, 50))} ms, p95 ${f(pct(r.p, 95))} ms`);
    console.log(`    added         median ${f(pct(r.added, 50))} ms, p95 ${f(pct(r.added, 95))} ms   (target < 2 ms)`);
  };
  console.log(`TTFB, ${N} requests per path (Pi body ${body.length} bytes, Anthropic SSE, keep-alive); load average ${load()}:`);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const inproc = await pairs(proxy.url);
  loop.disable();
  report('proxy in this process', inproc);
  console.log(`    event-loop delay of this process: median ${f(loop.percentile(50) / 1e6)} ms, p99 ${f(loop.percentile(99) / 1e6)} ms, max ${f(loop.max / 1e6)} ms`);
  // Saving runs beside the answer: wait for the last bodies before counting.
  for (let i = 0; i < 200 && store.saved < N + 20; i++) await new Promise((r) => setTimeout(r, 10));
  console.log(`    saved ${store.saved} bodies, ${store.failures} failures`);
  await proxy.close();

  if (!existsSync('dist/cli.js')) execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' });
  const cli = spawn(process.execPath, ['dist/cli.js', 'capture', '--port', '0', '--upstream', direct, '--out', join(tmp, 'captures-cli'), '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(cli);
  let text = '';
  cli.stdout!.on('data', (c) => (text += c));
  cli.stderr!.on('data', (c) => (text += c));
  for (let i = 0; i < 400 && !/listening on (http:\S+)/.test(text); i++) await new Promise((r) => setTimeout(r, 25));
  const cliUrl = /listening on (http:\S+)/.exec(text)?.[1];
  if (!cliUrl) throw new Error(`prefix-lens capture did not start: ${text}`);
  /** CPU seconds (user + system) the proxy process used so far (Linux /proc; null elsewhere). */
  const cpu = () => {
    try {
      const f = readFileSync(`/proc/${cli.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
    } catch {
      return null;
    }
  };
  const cpu0 = cpu();
  report(`proxy as its own process (prefix-lens capture); load average ${load()}`, await pairs(cliUrl));
  const cpu1 = cpu();
  if (cpu0 !== null && cpu1 !== null) console.log(`    CPU time of the proxy process: ${f(((cpu1 - cpu0) * 1000) / (N + 20))} ms per request (user + system, 10 ms ticks over ${N + 20} requests)`);
  cli.kill();

  // Streaming: 20 events, 20 ms apart.
  const slow = join(tmp, 'slow.mjs');
  writeFileSync(
    slow,
    `import http from 'node:http'; import { writeFileSync } from 'node:fs';
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => {
  res.writeHead(200, { 'content-type': 'text/event-stream' }); let i = 0;
  const t = setInterval(() => { res.write('event: ping\\ndata: {"type":"ping","i":' + i + '}\\n\\n'); if (++i === 20) { clearInterval(t); res.end(); } }, 20);
}); });
s.listen(0, '127.0.0.1', () => writeFileSync(process.argv[2], String(s.address().port)));`,
  );
  const slowPort = await child([slow, join(tmp, 'p2')], join(tmp, 'p2'));
  const slowUrl = `http://127.0.0.1:${slowPort}`;
  const proxy2 = await startCaptureServer({ store: new CaptureStore({ root: join(tmp, 'captures2') }), port: 0, upstreams: parseUpstreams([slowUrl]) });
  const lag: number[] = [];
  let chunksDirect = 0;
  let chunksProxy = 0;
  for (let k = 0; k < 20; k++) {
    const [a, b] = await Promise.all([timed(`${slowUrl}/v1/messages`, body), timed(`${proxy2.url}/v1/messages`, body)]);
    chunksDirect += a.chunks.length;
    chunksProxy += b.chunks.length;
    for (let i = 0; i < Math.min(a.chunks.length, b.chunks.length); i++) lag.push(b.chunks[i] - a.chunks[i]);
  }
  console.log(`Streaming, 20 streams of 20 SSE events 20 ms apart (direct and via capture at the same time):`);
  console.log(`  chunks received: direct ${chunksDirect}, via capture ${chunksProxy}`);
  console.log(`  per-event delay via capture: median ${f(pct(lag, 50))} ms, p95 ${f(pct(lag, 95))} ms, max ${f(Math.max(...lag))} ms`);
  await proxy2.close();
}

/** Part 3: the join's time and peak RSS at N, 2N and 4N requests. */
async function join3(n: number): Promise<void> {
  if (!existsSync('dist/cli.js')) execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' });
  const probe = join(tmp, 'probe.json');
  const env = { ...process.env, XDG_CACHE_HOME: join(tmp, 'cache'), PREFIX_LENS_CAPTURE_DIRS: '', PREFIX_LENS_BENCH_PROBE: probe };
  /** One analysis as its own process: CPU ms, peak RSS MiB, wall ms, output hash. */
  const run = (args: string[]) => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--require', './scripts/bench/probe.cjs', 'dist/cli.js', 'analyze', ...args, '--json', '--no-cache'], { env, maxBuffer: 1 << 30 });
    const wall = performance.now() - t0;
    if (r.status !== 0) throw new Error(`analyze ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    const p = JSON.parse(readFileSync(probe, 'utf8')) as { cpuMs: number; maxRssKiB: number };
    const text = r.stdout.toString('utf8');
    const out = JSON.parse(text) as { sessions: Array<{ requests: Array<{ evidence?: string }> }> };
    const wire = out.sessions.flatMap((s) => s.requests).filter((q) => q.evidence === 'wire').length;
    // Hashed without the temp folder's name (random per run), so runs before and after a change compare.
    return { cpu: p.cpuMs, rss: p.maxRssKiB / 1024, wall, sha: createHash('sha256').update(text.split(tmp).join('<tmp>')).digest('hex').slice(0, 12), wire };
  };
  const ways = ['--requests, response ids', '--requests, prefix hashes', '--captures (join)'] as const;
  const rows: Array<Array<ReturnType<typeof run>>> = [];
  const sizes = [n, 2 * n, 4 * n];
  console.log(`Join of a Claude Code session with its captured bodies (load average ${loadavg().map((x) => x.toFixed(1)).join(' / ')}):`);
  for (const size of sizes) {
    const ids = writeClaudeJoinSession(join(tmp, `ids-${size}`), size);
    const hashes = writeClaudeJoinSession(join(tmp, `hashes-${size}`), size, { responseIds: false });
    console.log(`  ${size} requests, ${ids.bodies} bodies, ${(ids.bytes / 1e6).toFixed(1)} MB:`);
    const row = [run([ids.transcript, '--requests', ids.requests]), run([hashes.transcript, '--requests', hashes.requests]), run([ids.transcript, '--captures', ids.captures])];
    row.forEach((x, i) => console.log(`    ${ways[i].padEnd(26)} CPU ${(x.cpu / 1000).toFixed(2)} s, wall ${(x.wall / 1000).toFixed(2)} s, peak RSS ${x.rss.toFixed(0)} MiB, ${x.wire} wire requests, output ${x.sha}`));
    rows.push(row);
    rmSync(join(tmp, `ids-${size}`), { recursive: true, force: true });
    rmSync(join(tmp, `hashes-${size}`), { recursive: true, force: true });
  }
  console.log('  ratios to N (CPU / peak RSS):');
  for (let w = 0; w < ways.length; w++) console.log(`    ${ways[w].padEnd(26)} ${rows.map((r) => `×${(r[w].cpu / rows[0][w].cpu).toFixed(2)} / ×${(r[w].rss / rows[0][w].rss).toFixed(2)}`).join(', ')}`);
}

(values.join ? join3(Number(values.join)) : main())
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => {
    agent.destroy();
    for (const c of children) c.kill();
    rmSync(tmp, { recursive: true, force: true });
  });
