/**
 * Writes a generated PI-Desktop transcript of scripts/bench-pi-desktop.ts's shape (a user row, a
 * tool row with a 400-byte result and an assistant row per turn; a system delta, a `resumable`
 * section as ADR 0337's settlements wrote, every `every`th turn; 0: none), for the scaling
 * figures of README "Scaling per host" (`node dist/cli.js analyze FILE --json --no-cache`).
 *
 *   npx tsx scripts/bench/pi-desktop-session.ts OUT_DIR TURNS [EVERY=10]
 *
 * Writes OUT_DIR/sessions/bench-<TURNS>.jsonl (a PI-Desktop home: the reader finds the host by its
 * sessions/ folder) and prints its path.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The transcript's lines (JSONL, no trailing newline), `turns` turns, a delta every `every`th (0: none). */
export function piDesktopLines(turns: number, every: number): string[] {
  const at = (i: number) => new Date(Date.UTC(2026, 10, 20, 9, 0, 0) + i * 1000).toISOString();
  const sys = (id: string, sections: Record<string, string>, i: number) =>
    JSON.stringify({ type: 'message', id, role: 'system', blocks: [], createdAt: at(i), modelSystem: { version: 1, messageJson: JSON.stringify({ role: 'system', content: '', timestamp: i, sections }) } });
  const lines = [JSON.stringify({ type: 'session', schema: 1, sessionId: 'bench', createdAt: at(0) }), sys('sys-0', { runtime: 'Instructions\n'.repeat(200), skills: 'First skill' }, 0)];
  for (let t = 1; t <= turns; t++) {
    const i = t * 4;
    lines.push(JSON.stringify({ type: 'message', id: `u${t}`, role: 'user', blocks: [{ type: 'text', text: `Turn ${t}: look at file ${t}.` }], createdAt: at(i) }));
    lines.push(JSON.stringify({ type: 'message', id: `t${t}`, role: 'tool', toolName: 'Read', blocks: [{ type: 'tool_call', callId: `c${t}`, args: { path: `f${t}.ts` }, result: 'x'.repeat(400), status: 'success' }], createdAt: at(i + 1) }));
    if (every && t % every === 0) lines.push(sys(`sys-${t}`, { resumable: `explorer / del-${t}: explore ${t}` }, i + 2));
    lines.push(JSON.stringify({ type: 'message', id: `a${t}`, role: 'assistant', blocks: [{ type: 'text', text: `Done ${t}.` }], meta: { providerId: 'relay', modelId: 'deepseek-chat', usage: { inputTokens: 100, outputTokens: 5, cacheReadTokens: 64 * t, cacheWriteTokens: 0 } }, createdAt: at(i + 3) }));
  }
  return lines;
}

if (process.argv[1] && /pi-desktop-session\.ts$/.test(process.argv[1])) {
  const [out, turns, every = '10'] = process.argv.slice(2);
  mkdirSync(join(out, 'sessions'), { recursive: true });
  const file = join(out, 'sessions', `bench-${turns}.jsonl`);
  writeFileSync(file, piDesktopLines(Number(turns), Number(every)).join('\n') + '\n');
  console.log(file);
}
