/**
 * The Claude Code host reader (transcripts of `@anthropic-ai/claude-code`; reference/claude-code-codex.md §1).
 *
 *   locateClaudeSessions(env, home)              → main session files (locate.ts)
 *   readClaudeSession(file, {requestsDir?})      → the session and one Session per sub-agent
 *                                                  (read.ts → normalize.ts [→ wirematch.ts])
 *
 * Sub-agents are their own sessions (their own prefix and cache lineage), linked to the parent by
 * `parentId`: the 2.1.2+ `<session>/subagents/agent-*.jsonl` files, the 2.0.x flat `agent-*.jsonl`
 * files of this session, and (1.0.x) inline `isSidechain` lines, which stay in the main session
 * under their own cache key `sidechain`.
 */
import { basename } from 'node:path';
import type { Session } from '../../core/model.js';
import { FILE_LIMITS, readRegularText } from '../files.js';
import { withWire, type CapturedRequest, type RequestSource, type Unmatched } from '../wirematch.js';
import { claudeSubagentOf, UNNAMED_SUBAGENT, type HeaderBag } from '../wireconversation.js';
import { subagentFiles } from './locate.js';
import { ccEvents, ccRequests, type CcRequests } from './normalize.js';
import { readCcFile, type CcRead } from './read.js';

export { claudeConfigDirs, locateClaudeSessions, encodeCwd } from './locate.js';
export { billingText, firstUserText } from './normalize.js';

export interface ReadClaudeOptions {
  /** Folder of captured request bodies (all of this session's and its sub-agents'): wire evidence. */
  requestsDir?: RequestSource;
}


function toSession(read: CcRead, reqs: CcRequests, id: string, parentId?: string, title?: string): Session {
  const s: Session = {
    host: 'claude-code',
    id,
    path: read.file,
    requests: reqs.requests,
    diagnostics: [...read.diagnostics, ...reqs.diagnostics],
    ignored: read.ignored,
    events: ccEvents(read),
  };
  if (read.cwd) s.cwd = read.cwd;
  const t = title ?? read.title;
  if (t) s.title = t;
  if (parentId) s.parentId = parentId;
  return s;
}

/** `description` of a sub-agent's `.meta.json` (the Agent tool call's description), if readable. */
async function agentTitle(file: string): Promise<string | undefined> {
  try {
    const meta = JSON.parse(await readRegularText(file.replace(/\.jsonl$/, '.meta.json'), FILE_LIMITS.small)) as { description?: unknown; agentType?: unknown };
    const d = typeof meta.description === 'string' ? meta.description : undefined;
    const t = typeof meta.agentType === 'string' ? meta.agentType : undefined;
    return d && t ? `${t}: ${d}` : (d ?? t);
  } catch {
    return undefined;
  }
}

/**
 * Reads a Claude Code session (main transcript) with its sub-agents.
 * @returns [main, ...sub-agents]; never throws for bad content (diagnostics with file and line)
 */
export async function readClaudeSession(file: string, opts: ReadClaudeOptions = {}): Promise<Session[]> {
  const main = await readCcFile(file);
  const id = main.sessionId ?? basename(file, '.jsonl');
  const { nested, flat } = await subagentFiles(file, id);
  const agents: CcRead[] = [];
  for (const f of nested) agents.push(await readCcFile(f));
  for (const f of flat) {
    const r = await readCcFile(f);
    if (r.sessionId === id) agents.push(r);
  }
  // Progress copies of sub-agent responses count only when no sub-agent file exists.
  const mainReqs = ccRequests(main, { subagent: false, progressCopies: agents.length === 0 });
  const sessions: Session[] = [toSession(main, mainReqs, id)];
  for (const a of agents) {
    const reqs = ccRequests(a, { subagent: true, progressCopies: false });
    sessions.push(toSession(a, reqs, a.agentId ?? basename(a.file, '.jsonl'), id, await agentTitle(a.file)));
  }
  if (!opts.requestsDir) return sessions;
  return withWire(sessions, opts.requestsDir, unmatchedClaude);
}

/** Start of Claude Code's compaction prompt (the last user message of its compaction call). */
const COMPACT_MARK = 'Your task is to create a detailed summary of the conversation so far';

/**
 * The sub-agent a body was sent for: the `x-claude-code-agent-id` request header the recorder and
 * the capture proxy keep in the meta (2.1.328: on every sub-agent request, absent on the main
 * conversation's), else `sub-agent` when the billing header (`system[0]`) says
 * `cc_is_subagent=true`; undefined for the main conversation.
 */
function subagentOf(b: CapturedRequest): string | undefined {
  const headers = b.meta?.headers;
  return claudeSubagentOf(headers && typeof headers === 'object' ? (headers as HeaderBag) : {}, b.wire?.blocks ?? []);
}

/**
 * A body the transcript has no request for: Claude Code's compaction call, a failed attempt, or
 * another call it does not record. A sub-agent's body, or one whose first message is not the main
 * conversation's (another conversation: its own tools, system and history), goes to that
 * conversation's session (the sub-agent's, made when its transcript is missing), never into the
 * main lineage, where it would be judged as a break of the parent (a sub-agent's tools differ
 * from tools[3] on: 2.1.328).
 */
const unmatchedClaude: Unmatched = (b, ctx) => {
  const compaction = b.wire!.blocks.some((x) => x.segment === 'messages' && new TextDecoder().decode(x.bytes).includes(COMPACT_MARK));
  const u: ReturnType<Unmatched> & object = compaction
    ? { kind: 'summary', kindEvidence: 'heuristic', provider: 'anthropic', note: 'compaction call: Claude Code does not record it in the transcript' }
    : { kind: 'agent', provider: 'anthropic', note: 'no transcript request for this body' };
  const agent = subagentOf(b);
  if (agent === undefined && ctx.sameConversation) return u;
  const tag = ctx.firstMessage ? ctx.firstMessage.slice(0, 12) : basename(b.file);
  const id = agent === undefined ? `unrecorded-${tag}` : agent === UNNAMED_SUBAGENT ? `${UNNAMED_SUBAGENT}-${tag}` : agent;
  const what = agent === undefined ? `a conversation the transcript does not have (first message ${tag})` : `sub-agent ${id}`;
  return {
    ...u,
    conversation: {
      id,
      title: agent === undefined ? 'calls not in the transcript' : `sub-agent ${id} (no transcript)`,
      note: `${what}: no transcript of it was found beside the session, so its requests come from the captured bodies alone (its own cache lineage, not the session's)`,
    },
  };
};
