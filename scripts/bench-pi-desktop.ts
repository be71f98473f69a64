/**
 * PI-Desktop reader benchmark: a generated transcript of N turns (a user row, a tool row, an
 * assistant row each; a system delta every 10th turn), read, rebuilt in both shapes, analyzed and
 * priced. Prints the time and peak RSS. Usage: npx tsx scripts/bench-pi-desktop.ts [turns=2000]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSession } from '../src/core/analyze.js';
import { readPiDesktopSession } from '../src/hosts/pi-desktop/index.js';
import { sessionReport } from '../src/report/json.js';

const turns = Number(process.argv[2] ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'bench-pi-desktop-'));
mkdirSync(join(dir, 'sessions'));
const at = (i: number) => new Date(Date.UTC(2026, 10, 20, 9, 0, 0) + i * 1000).toISOString();
const sys = (id: string, sections: Record<string, string>, i: number) => JSON.stringify({ type: 'message', id, role: 'system', blocks: [], createdAt: at(i), modelSystem: { version: 1, messageJson: JSON.stringify({ role: 'system', content: '', timestamp: i, sections }) } });
const lines = [JSON.stringify({ type: 'session', schema: 1, sessionId: 'bench', createdAt: at(0) }), sys('sys-0', { runtime: 'Instructions\n'.repeat(200), skills: 'First skill' }, 0)];
for (let t = 1; t <= turns; t++) {
  const i = t * 4;
  lines.push(JSON.stringify({ type: 'message', id: `u${t}`, role: 'user', blocks: [{ type: 'text', text: `Turn ${t}: look at file ${t}.` }], createdAt: at(i) }));
  lines.push(JSON.stringify({ type: 'message', id: `t${t}`, role: 'tool', toolName: 'Read', blocks: [{ type: 'tool_call', callId: `c${t}`, args: { path: `f${t}.ts` }, result: 'x'.repeat(400), status: 'success' }], createdAt: at(i + 1) }));
  if (t % 10 === 0) lines.push(sys(`sys-${t}`, { resumable: `explorer / del-${t}: explore ${t}` }, i + 2));
  lines.push(JSON.stringify({ type: 'message', id: `a${t}`, role: 'assistant', blocks: [{ type: 'text', text: `Done ${t}.` }], meta: { providerId: 'relay', modelId: 'deepseek-chat', usage: { inputTokens: 100, outputTokens: 5, cacheReadTokens: 64 * t, cacheWriteTokens: 0 } }, createdAt: at(i + 3) }));
}
const file = join(dir, 'sessions', 'bench.jsonl');
writeFileSync(file, lines.join('\n') + '\n');
(async () => {
  const t0 = performance.now();
  const [s] = await readPiDesktopSession(file);
  const t1 = performance.now();
  const report = sessionReport(analyzeSession(s));
  const t2 = performance.now();
  const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
  process.stdout.write(
    `${turns} turns, ${lines.length} lines, ${s.requests.length} requests, ${report.systemShapes?.deltas ?? 0} deltas: read+rebuild ${(t1 - t0).toFixed(0)} ms, analyze+price ${(t2 - t1).toFixed(0)} ms; peak RSS ${mb(process.resourceUsage().maxRSS * 1024)}\n`,
  );
  rmSync(dir, { recursive: true, force: true });
})();
