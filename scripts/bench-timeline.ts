/**
 * `npm run bench:timeline`: first paint and scroll frame times of the timeline in headless
 * Chromium for sessions of 1,000 / 10,000 / 100,000 requests, built from the recorded Pi main
 * session (its 16 request reports and phux messages repeated, indices, matches and times shifted).
 * Prints figures; targets (issue 7): 10,000 requests first paint < 400 ms, no scroll frame > 50 ms.
 *
 * First paint = from navigation start to the first animation frame after the lanes and request
 * options exist (includes reading the file, parsing the HTML and the report's JSON), in a browser
 * that has opened the same report once before (warm: fonts and code caches loaded). Scroll = 120 frames, each scrolling the
 * lanes by 1.5 screens (so every frame draws new columns and swaps options), timed by
 * requestAnimationFrame deltas; long frames also counted with the Long Animation Frames API.
 * Usage: npm run bench:timeline [-- 1000 10000]
 */
import { createWriteStream, mkdirSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { buildReport } from '../src/cli/main.js';
import { createHtmlReportWriter, loadWebviewAssets } from '../src/report/html.js';
import type { RequestReport, SessionReport } from '../src/report/json.js';
// @ts-expect-error plain ESM script without types
import { CHROMIUM_ARGS, ensureChromium } from './ensure-chromium.mjs';

const PI_MAIN_DIR = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const PI_MAIN_REQUESTS = 'test/fixtures/pi/main/requests';
const SIZES = process.argv.slice(2).map(Number).filter((n) => n > 0);
const OUT = resolve('.tmp/bench-timeline');

/** A session of `n` requests: the recorded one repeated, each copy shifted in index, seq and time. */
function scaled(base: SessionReport, n: number): SessionReport {
  const k = base.requests.length;
  const t0 = Date.parse(base.requests[0].time ?? '2026-01-01T00:00:00Z');
  const tn = Date.parse(base.requests[k - 1].time ?? '2026-01-01T00:00:00Z');
  const span = tn - t0 + 60_000;
  const requests: RequestReport[] = [];
  for (let i = 0; i < n; i++) {
    const copy = Math.floor(i / k);
    const r = base.requests[i % k];
    const shift = copy * k;
    requests.push({
      ...r,
      index: i + 1,
      line: r.line + copy * 50,
      matched: r.matched === null ? null : r.matched + shift,
      time: r.time ? new Date(Date.parse(r.time) + copy * span).toISOString() : null,
    });
  }
  const phux = base.phux && {
    ...base.phux,
    messages: [] as NonNullable<SessionReport['phux']>['messages'],
  };
  if (phux) {
    const m = base.phux!.messages;
    const maxSeq = Math.max(...m.map((x) => x.seq));
    for (let copy = 0; copy * k < n; copy++) {
      for (const x of m) {
        if (x.request === null || x.request + copy * k > n) continue;
        phux.messages.push({
          ...x,
          seq: x.seq + copy * maxSeq,
          ...(x.baseSeq !== undefined ? { baseSeq: x.baseSeq + copy * maxSeq } : {}),
          line: x.line + copy * 50,
          request: x.request + copy * k,
        });
      }
    }
  }
  const breaks = requests.filter((r) => r.verdict === 'break').length;
  return { ...base, id: `${base.id}-x${n}`, title: `${base.title ?? 'session'} ×${n}`, requests, totals: { ...base.totals, requests: n, breaks }, ...(phux ? { phux } : {}) };
}

async function writeReport(file: string, s: SessionReport): Promise<void> {
  const stream = createWriteStream(file);
  const w = createHtmlReportWriter((c) => new Promise<void>((ok) => (stream.write(c) ? ok() : stream.once('drain', () => ok()))), loadWebviewAssets('dist'));
  await w.session(s);
  await w.end();
  await new Promise<void>((ok) => stream.end(() => ok()));
}

interface Figures {
  /** Navigation start → first frame with the lanes (everything: file read, HTML parse, JSON.parse, render). */
  firstPaintMs: number;
  /** Navigation start → the app starts reading the data element (file read + HTML parse). */
  loadMs: number;
  /** JSON.parse of the data element. */
  parseMs: number;
  /** Report in hand → first frame with the lanes (what the VS Code panel pays after a load message). */
  renderMs: number;
  fcpMs: number | null;
  options: number;
  frames: number;
  maxFrameMs: number;
  p95FrameMs: number;
  longFrames: number;
  maxLongFrameMs: number;
  keyMaxMs: number;
}

async function measure(file: string, executablePath: string): Promise<Figures> {
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS as string[], headless: true });
  try {
    // Warm-up: open the report once (fonts, code caches, the first layout of a fresh browser), so
    // the figures are those of a page opened in a running browser, as in VS Code.
    const warm = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await warm.goto(pathToFileURL(file).href, { timeout: 300_000 });
    await warm.waitForSelector('.pl-mark', { timeout: 300_000 });
    await warm.close();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // A string, not a function: the TypeScript runner would add helpers the page lacks.
    await page.addInitScript(`(() => {
      window.__bench = { long: [] };
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__bench.long.push(e.duration); })
        .observe({ type: 'long-animation-frame', buffered: true });
      const mo = new MutationObserver(() => {
        if (!document.querySelector('.pl-mark')) return;
        mo.disconnect();
        requestAnimationFrame(() => { window.__bench.firstPaint = performance.now(); });
      });
      document.addEventListener('DOMContentLoaded', () => mo.observe(document.body, { childList: true, subtree: true }));
    })();`);
    await page.goto(pathToFileURL(file).href, { timeout: 300_000 });
    await page.waitForFunction(() => (window as unknown as { __bench: { firstPaint?: number } }).__bench.firstPaint !== undefined, null, { timeout: 300_000 });
    const first = await page.evaluate(() => ({
      firstPaint: (window as unknown as { __bench: { firstPaint: number } }).__bench.firstPaint,
      parse: performance.getEntriesByName('prefix-lens:parse')[0]?.startTime ?? NaN,
      message: performance.getEntriesByName('prefix-lens:message')[0]?.startTime ?? NaN,
      rendered: performance.getEntriesByName('prefix-lens:rendered')[0]?.startTime ?? NaN,
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
      options: document.querySelectorAll('[role="option"].pl-mark').length,
    }));
    await page.evaluate(() => {
      (window as unknown as { __bench: { long: number[] } }).__bench.long = [];
    });
    const scroll = (await page.evaluate(`new Promise((done) => {
      const sc = document.querySelector('.pl-scroller');
      const deltas = [];
      let last = 0;
      let frame = 0;
      const step = (t) => {
        deltas.push(t - last);
        last = t;
        sc.scrollLeft = (sc.scrollLeft + sc.clientWidth * 1.5) % Math.max(1, sc.scrollWidth - sc.clientWidth);
        if (++frame < 120) requestAnimationFrame(step);
        else done(deltas.slice(1));
      };
      requestAnimationFrame((t) => { last = t; requestAnimationFrame(step); });
    })`)) as number[];
    // Keyboard: End, Home and 20 × n, each to the next frame.
    await page.locator('[role="listbox"]').focus();
    let keyMax = 0;
    for (const key of ['End', 'Home', ...Array(20).fill('n')]) {
      const t = (await page.evaluate(`(async () => {
        const start = performance.now();
        document.querySelector('[role="listbox"]').dispatchEvent(new KeyboardEvent('keydown', { key: ${JSON.stringify(key)}, bubbles: true }));
        await new Promise((r) => requestAnimationFrame(() => r(null)));
        return performance.now() - start;
      })()`)) as number;
      keyMax = Math.max(keyMax, t);
    }
    const long = await page.evaluate(() => (window as unknown as { __bench: { long: number[] } }).__bench.long);
    const sorted = [...scroll].sort((a, b) => a - b);
    return {
      firstPaintMs: first.firstPaint,
      loadMs: first.parse,
      parseMs: first.message - first.parse,
      renderMs: first.firstPaint - first.message,
      fcpMs: first.fcp,
      options: first.options,
      frames: scroll.length,
      maxFrameMs: sorted[sorted.length - 1],
      p95FrameMs: sorted[Math.floor(sorted.length * 0.95)],
      longFrames: long.length,
      maxLongFrameMs: long.length ? Math.max(...long) : 0,
      keyMaxMs: keyMax,
    };
  } finally {
    await browser.close();
  }
}

async function mainBench(): Promise<void> {
  const executablePath = (ensureChromium as () => string)();
  mkdirSync(OUT, { recursive: true });
  const { report } = await buildReport([PI_MAIN_DIR], PI_MAIN_REQUESTS, process.cwd());
  const base = report.sessions[0];
  console.log(`timeline benchmark: headless Chromium (${executablePath}), viewport 1280×900, session = recorded Pi main (${base.requests.length} requests) repeated`);
  console.log('requests  html MB  first paint ms  = load + JSON.parse + render ms  options in DOM  scroll frames  max frame ms  p95 frame ms  long frames (max ms)  key→frame max ms');
  for (const n of SIZES.length ? SIZES : [1000, 10_000, 100_000]) {
    const file = join(OUT, `timeline-${n}.html`);
    await writeReport(file, scaled(base, n));
    const mb = statSync(file).size / 1e6;
    const f = await measure(file, executablePath);
    console.log(
      [
        String(n).padStart(8),
        mb.toFixed(1).padStart(8),
        f.firstPaintMs.toFixed(0).padStart(15),
        `= ${f.loadMs.toFixed(0)} + ${f.parseMs.toFixed(0)} + ${f.renderMs.toFixed(0)}`.padStart(32),
        String(f.options).padStart(15),
        String(f.frames).padStart(14),
        f.maxFrameMs.toFixed(1).padStart(13),
        f.p95FrameMs.toFixed(1).padStart(13),
        `${f.longFrames} (${f.maxLongFrameMs.toFixed(0)})`.padStart(21),
        f.keyMaxMs.toFixed(1).padStart(17),
      ].join(' '),
    );
  }
  console.log(`load average during the run: ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores`);
  console.log('targets: 10,000 requests first paint < 400 ms; no scroll frame > 50 ms (long frames = Long Animation Frames ≥ 50 ms)');
}

mainBench().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
