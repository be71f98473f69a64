/**
 * Runs the CLI's `main` in this process, collecting what it prints: `out` (stdout lines joined
 * by "\n"), `outLines` (as printed) and `err` (stderr lines joined), with its exit code.
 */
import { main } from '../src/cli/main.js';

export async function runCli(args: string[]): Promise<{ code: number; out: string; outLines: string[]; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, (s) => out.push(s), (s) => err.push(s), process.cwd());
  return { code, out: out.join('\n'), outLines: out, err: err.join('\n') };
}
