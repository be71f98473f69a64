/** Shared helpers for the Pi reader tests: temp session files and chain inspection. */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blocksOf } from '../../../src/core/chain.js';
import type { BlockNode } from '../../../src/core/chain.js';
import type { Block } from '../../../src/core/model.js';

/** A fresh temp directory; remove with `cleanup`. */
export async function tempDir(prefix = 'pi-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function cleanup(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Writes objects (or raw strings) as JSONL lines; `end` is appended after the last line (default "\n"). */
export async function writeJsonl(file: string, lines: Array<object | string>, end = '\n'): Promise<void> {
  const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + end;
  await writeFile(file, text);
}

/** Messages-segment blocks of a chain. */
export function messageBlocksOf(tail: BlockNode | null): Block[] {
  return blocksOf(tail).filter((b) => b.segment === 'messages');
}

/** Number of items (messages / input items) in the messages segment of a chain. */
export function messageCount(tail: BlockNode | null): number {
  return new Set(messageBlocksOf(tail).map((b) => b.item)).size;
}

/** The JSON text of message item `item` of a chain (its content blocks joined by the commas compact JSON has between them). */
export function messageText(tail: BlockNode | null, item: number): string {
  const dec = new TextDecoder();
  return messageBlocksOf(tail)
    .filter((b) => b.item === item)
    .map((b) => dec.decode(b.bytes))
    .join(',');
}

// ------------------------------------------------------------------ session builders

export const HEADER = { type: 'session', version: 3, id: '01a00000-0000-7000-8000-000000000001', timestamp: '2026-11-29T10:00:00.000Z', cwd: '/work/demo' };

let clock = Date.parse('2026-11-29T10:00:01.000Z');
const iso = () => new Date((clock += 1000)).toISOString();

export function entry(id: string, parentId: string | null, type: string, fields: object): object {
  return { type, id, parentId, timestamp: iso(), ...fields };
}

export function user(id: string, parentId: string | null, text: string | object[]): object {
  const content = typeof text === 'string' ? [{ type: 'text', text }] : text;
  return entry(id, parentId, 'message', { message: { role: 'user', content, timestamp: clock } });
}

export interface AssistantOpts {
  api?: string;
  provider?: string;
  model?: string;
  usage?: { input: number; output: number; cacheRead: number; cacheWrite: number };
  stopReason?: string;
  responseId?: string;
  errorMessage?: string;
}

export function assistant(id: string, parentId: string | null, content: object[] | string, o: AssistantOpts = {}): object {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  const u = o.usage ?? { input: 10, output: 2, cacheRead: 0, cacheWrite: 0 };
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: blocks,
    api: o.api ?? 'anthropic-messages',
    provider: o.provider ?? 'anthropic',
    model: o.model ?? 'claude-sonnet-4-5',
    usage: { ...u, totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite },
    stopReason: o.stopReason ?? 'stop',
    timestamp: clock,
  };
  if (o.responseId) message.responseId = o.responseId;
  if (o.errorMessage) message.errorMessage = o.errorMessage;
  return entry(id, parentId, 'message', { message });
}

export function toolCall(id: string, name = 'read', args: object = { path: 'a.txt' }): object {
  return { type: 'toolCall', id, name, arguments: args };
}

export function toolResult(id: string, parentId: string | null, toolCallId: string, text: string): object {
  return entry(id, parentId, 'message', {
    message: { role: 'toolResult', toolCallId, toolName: 'read', content: [{ type: 'text', text }], isError: false, timestamp: clock },
  });
}

/** Every non-blank line of the recorded Pi sessions (test/fixtures/pi/{main,long}), file by file. */
export function recordedPiLines(): string[] {
  const out: string[] = [];
  for (const scenario of ['main', 'long']) {
    const base = join('test/fixtures/pi', scenario, 'agent', 'sessions');
    for (const sub of readdirSync(base)) for (const f of readdirSync(join(base, sub))) for (const l of readFileSync(join(base, sub, f), 'utf8').split('\n')) if (l) out.push(l);
  }
  return out;
}

/** The `message` of every `message` entry of the recorded Pi sessions (recordedPiLines). */
export function recordedPiMessages(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of recordedPiLines()) {
    const e = JSON.parse(line) as { type: string; message?: Record<string, unknown> };
    if (e.type === 'message' && e.message) out.push(e.message);
  }
  return out;
}
