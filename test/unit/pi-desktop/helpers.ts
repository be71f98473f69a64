/** Shared helpers for the PI-Desktop tests: the built data dir (test/fixtures/pi-desktop/home). */
import { join } from 'node:path';
import { analyzeSession, type SessionAnalysis } from '../../../src/core/analyze.js';
import type { Session } from '../../../src/core/model.js';
import { readPiDesktopSession } from '../../../src/hosts/pi-desktop/index.js';
import { sessionReport, type SessionReport } from '../../../src/report/json.js';

export const HOME = 'test/fixtures/pi-desktop/home';
/** "Parser delegation": relay/deepseek-chat, route flag unknown (collapsed). */
export const SETTLE = '7c1e2f60-5d1a-4c3e-9a0b-2e4f6a8c0d11';
/** "Lexer delegate (flash)": deepseek/deepseek-v4-flash, flagged supportsMidConvoSystemMessages. */
export const MIDCONVO = 'b24d9e07-3f6a-4b1c-8e2d-5a7c9f1e3b42';
/** "Parser review (Sonnet)": anthropic/claude-sonnet-4-5, flag false (collapsed, known). */
export const ANTHROPIC = 'e5a0c3d8-9b27-4f61-a4e3-0c8d2b6f7a95';

export const transcript = (id: string) => join(HOME, 'sessions', `${id}.jsonl`);

export async function sessions(id: string): Promise<Session[]> {
  return readPiDesktopSession(transcript(id));
}

export async function analyzed(id: string): Promise<{ a: SessionAnalysis; report: SessionReport }> {
  const [s] = await sessions(id);
  const a = analyzeSession(s);
  return { a, report: sessionReport(a) };
}
