/**
 * Benchmark (not a test) of the BotHarness reader: builds a long DSH session log (default 5,000
 * model calls with a ~2 KB tool result each; one zstd frame per step, as DSH writes a batch per
 * durable append) and a botharness.db, then measures
 *   1. a bare pass: zstd frames decoded and every line JSON.parsed (zstd.ts, nothing else);
 *   2. the analysis: read → normalize → hash → diverge → judge → view model (persona included);
 * and prints MB/s (decompressed bytes) of each, the ratio analysis/parse, and peak RSS.
 * Usage: npm run bench:botharness [-- --requests 5000 --keep]
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { analyzeSession } from '../src/core/analyze.js';
import type { Diagnostic } from '../src/core/model.js';
import { readBotHarnessSession } from '../src/hosts/botharness/index.js';
import { zstdLogLines } from '../src/hosts/botharness/zstd.js';
import { sessionReport } from '../src/report/json.js';
import { tempHome, writeDb, writeLog, zstdReady } from '../test/unit/botharness/dsh-fixture.js';
import { CWD_DIR, LogBuilder, PERSONA_ADA, system, T0 } from '../test/unit/botharness/scenarios.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '5000' }, keep: { type: 'boolean' } } });
const N = Number(values.requests);

let peak = 0;
const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
const mb = (b: number) => (b / 1024 / 1024).toFixed(1);

(async () => {
  await zstdReady();
  const home = tempHome('bench');
  const b = new LogBuilder('bh-bench');
  const sys = system('ada', PERSONA_ADA);
  const filler = 'x'.repeat(2000);
  let raw = 0;
  for (let i = 0; i < N; i++) {
    b.user(`Step ${i}: read the next file.`);
    b.call(`Reading file ${i}.`, i === 0 ? 0 : 'hit', i === 0 ? { text: sys, reason: 'initial' } : undefined);
    b.ev('tool/result', { turn: i + 1, step: 1, callId: `call_${i}`, content: [{ type: 'text', text: `${i} ${filler}` }], isError: false }, { surfaceOp: 'append' });
    b.flush();
  }
  const bytes = b.bytes();
  for (const batch of b.batches) for (const l of batch) raw += Buffer.byteLength(JSON.stringify(l)) + 1;
  const file = writeLog(home, CWD_DIR, 'bh-bench', bytes);
  await writeDb(home, { generation: 57, ownership: [{ session_id: 'bh-bench', bot_slug: 'ada', created_at: new Date(T0).toISOString(), persona_snapshot: PERSONA_ADA, persona_snapshot_at: new Date(T0 + 2000).toISOString() }] });
  process.stdout.write(`log: ${N} model calls, ${b.batches.length + 1} zstd frames, ${mb(bytes.length)} MB compressed, ${mb(raw)} MB of JSONL\n`);

  global.gc?.();
  let t = performance.now();
  const diags: Diagnostic[] = [];
  let lines = 0;
  for await (const l of zstdLogLines(file, diags)) {
    JSON.parse(l.text);
    if (++lines % 5000 === 0) sample();
  }
  const parseMs = performance.now() - t;
  sample();
  process.stdout.write(`bare pass (frames decoded + JSON.parse): ${lines} lines in ${parseMs.toFixed(0)} ms = ${(raw / 1024 / 1024 / (parseMs / 1000)).toFixed(1)} MB/s; peak RSS ${mb(peak)} MB\n`);

  global.gc?.();
  peak = 0;
  const timer = setInterval(sample, 20);
  t = performance.now();
  const report = sessionReport(analyzeSession(await readBotHarnessSession(file)));
  const analyzeMs = performance.now() - t;
  clearInterval(timer);
  sample();
  process.stdout.write(
    `analysis (read → … → view model): ${report.requests.length} requests in ${analyzeMs.toFixed(0)} ms = ${(raw / 1024 / 1024 / (analyzeMs / 1000)).toFixed(1)} MB/s; ` +
      `ratio analysis/parse ${(analyzeMs / parseMs).toFixed(2)}; peak RSS ${mb(peak)} MB; persona ${report.persona?.verdict}, breaks ${report.totals.breaks}\n`,
  );
  if (!values.keep) rmSync(home, { recursive: true, force: true });
  else process.stdout.write(`kept ${home}\n`);
})();
