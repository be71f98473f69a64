/**
 * Which conversation a captured request belongs to, from what the wire carries besides the
 * prompt: the host's session header (the capture proxy files bodies by it) and Claude Code's
 * sub-agent marks. One place for the proxy (src/capture/server.ts) and the readers that join or
 * split captured bodies (hosts/capture, hosts/claude-code).
 */
import type { Block } from '../core/model.js';

/** Request headers as Node gives them (or as a capture meta keeps them). */
export type HeaderBag = Record<string, string | string[] | undefined>;

/**
 * Request headers that name the host's session, in the order they are looked for: Claude Code
 * (`x-claude-code-session-id`), OpenCode (`x-session-id`, reference/opencode.md §3.7), Codex
 * (`session-id`), Pi on OpenAI Responses (`session_id`, reference/pi.md §3).
 */
export const SESSION_HEADERS = ['x-claude-code-session-id', 'x-session-id', 'session-id', 'session_id'] as const;

/** The first value of a header that may repeat. */
export function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The first session header the request carries, with its name; null when none. */
export function sessionOf(headers: HeaderBag): { name: string; value: string } | null {
  for (const name of SESSION_HEADERS) {
    const v = header(headers[name]);
    if (v) return { name, value: v };
  }
  return null;
}

/** claudeSubagentOf's answer for a sub-agent that the wire marks but does not name. */
export const UNNAMED_SUBAGENT = 'sub-agent';

/**
 * The Claude Code sub-agent a body was sent for: the `x-claude-code-agent-id` request header
 * (2.1.328: on every sub-agent request, absent on the main conversation's), else UNNAMED_SUBAGENT
 * when the billing header (the first system block) says `cc_is_subagent=true`; undefined for the
 * main conversation (and for other hosts).
 */
export function claudeSubagentOf(headers: HeaderBag, blocks: readonly Block[]): string | undefined {
  const id = header(headers['x-claude-code-agent-id']);
  if (id) return id;
  const billing = blocks.find((b) => b.segment === 'system');
  return billing && new TextDecoder().decode(billing.bytes).includes('cc_is_subagent=true') ? UNNAMED_SUBAGENT : undefined;
}
