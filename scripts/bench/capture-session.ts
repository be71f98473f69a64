/**
 * Writes a generated capture folder for the wire-mode scaling figures of README "Scaling per host":
 * the OpenCode 1.18 Chat Completions body of the recording (test/fixtures/opencode-capture, body 6:
 * 31.8 KB of system prompt and tools) grown by one user/assistant turn per request, each body the
 * whole conversation so far (the folder's bytes grow as N²), with a meta per body (times, usage
 * as a prefix cache would report it, the session header).
 *
 *   npx tsx scripts/bench/capture-session.ts OUT_DIR BODIES
 *
 * Writes OUT_DIR/capture-<BODIES>/ and prints its path (`node dist/cli.js analyze DIR --json --no-cache`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RECORDED = 'test/fixtures/opencode-capture/captures/session-ses_dcdc9b833ffegPxlqBVR4iOzp5/000006-openai-completions';

/** Writes `bodies` bodies and metas into `dir`. */
export function writeCaptureSession(dir: string, bodies: number): void {
  mkdirSync(dir, { recursive: true });
  const base = JSON.parse(readFileSync(`${RECORDED}.body.json`, 'utf8')) as { messages: object[] } & Record<string, unknown>;
  const meta = JSON.parse(readFileSync(`${RECORDED}.meta.json`, 'utf8')) as Record<string, unknown>;
  const messages = base.messages.slice(0, -1);
  const t0 = Date.UTC(2026, 11, 1, 15, 0, 0);
  let bytes = 0;
  for (let i = 1; i <= bodies; i++) {
    messages.push({ role: 'user', content: `Turn ${i}: read src/module-${i}.ts and say what the exported function returns for an empty input.` });
    const body = JSON.stringify({ ...base, messages });
    const name = `${String(i).padStart(6, '0')}-openai-completions`;
    writeFileSync(join(dir, `${name}.body.json`), body);
    const prompt = Math.round(body.length / 4);
    const at = (ms: number) => new Date(t0 + i * 5000 + ms).toISOString();
    writeFileSync(
      join(dir, `${name}.meta.json`),
      JSON.stringify({ ...meta, n: i, receivedAt: at(0), responseStartedAt: at(40), responseEndedAt: at(900), usage: { prompt_tokens: prompt, completion_tokens: 20, total_tokens: prompt + 20, prompt_tokens_details: { cached_tokens: i > 1 ? Math.floor((prompt - 40) / 128) * 128 : 0 } }, bodyBytes: Buffer.byteLength(body), bodySha256: undefined }),
    );
    bytes += body.length;
    messages.push({ role: 'assistant', content: `Scripted reply ${i}: module-${i}.ts exports parse(), which returns an empty list for an empty input.` });
  }
  process.stderr.write(`${bodies} bodies, ${(bytes / 1e6).toFixed(1)} MB\n`);
}

if (process.argv[1] && /capture-session\.ts$/.test(process.argv[1])) {
  const [out, n] = process.argv.slice(2);
  const dir = join(out, `capture-${n}`);
  writeCaptureSession(dir, Number(n));
  console.log(dir);
}
