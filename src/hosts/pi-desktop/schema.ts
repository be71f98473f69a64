/**
 * zod schemas of PI-Desktop's transcript lines and the pi-ai system messages they persist.
 *
 * Sources (project reference `reference/botharness.md` part B; PI-Desktop forks, e.g.
 * `vastsa/PI-Desktop` @ 2143c796):
 *  - `crates/host-core/src/transcripts.rs` (`TRANSCRIPT_SCHEMA = 1`): header
 *    `{type:'session', schema:1, sessionId, createdAt}`; message `{type:'message', id, role,
 *    toolName?, isError?, blocks:[text|thinking|tool_call|attachment], meta?, createdAt}`; compaction
 *    `{type:'compaction', id, summary, firstKeptMessageId?, throughMessageId, tokensBefore, usage?,
 *    retainedTail?, details?, providerId?, modelId?, createdAt}` (`details.systemMessageJson` in newer forks);
 *  - `crates/host-core/src/sessions.rs` (`meta`): `status`, `modelId`, `providerId`, `usage
 *    {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens, totalTokens}`,
 *    `parentToolCallId` / `agentName` on a sub-agent's rows (ADR 0062);
 *  - `SystemTranscriptJournal.persist` (`system-transcript-journal.ts`): system rows carry
 *    `modelSystem {version:1, messageJson, beforeMessageId?, afterMessageId?}`; `messageJson` is a
 *    pi-ai `SystemMessage` (`readSystemMessage`'s TypeBox schema): `{role:'system', content,
 *    timestamp, sections?: Record<string, string|null>, toolsAdded?: [{name, description,
 *    parameters, constrainedSampling?}], toolsRemoved?: [{name}]}`.
 * Unverified (the reference could not see it): where `modelSystem` sits in the Rust line. Both
 * placements are accepted (on the line, or in `meta`); so are pi-ai's usage names
 * `{input, output, cacheRead, cacheWrite}` next to host-core's. Objects are loose: fields a later
 * version adds are kept and ignored.
 */
import { z } from 'zod';
import { hostIsoTime, optionalHostNumber, type ValueSpec } from '../numbers.js';

const USAGE: ValueSpec = {
  inputTokens: 'count',
  outputTokens: 'count',
  cacheReadTokens: 'count',
  cacheWriteTokens: 'count',
  reasoningTokens: 'count',
  totalTokens: 'count',
  input: 'count',
  output: 'count',
  cacheRead: 'count',
  cacheWrite: 'count',
};
/**
 * The token counts and times of a transcript line (header, message row, compaction row), checked
 * before its schema (numbers.ts checkHostValues): a bad one is null, with one warning at the line.
 */
export const PD_VALUES: ValueSpec = { createdAt: 'iso', tokensBefore: 'count', usage: USAGE, meta: { usage: USAGE } };

/** Line 1. */
export const HeaderSchema = z.looseObject({
  type: z.literal('session'),
  schema: z.number(),
  sessionId: z.string(),
  createdAt: hostIsoTime,
});
export type PdHeader = z.infer<typeof HeaderSchema>;

const count = optionalHostNumber;

/** Usage in host-core's names (`sessions.rs`) or pi-ai's (`Usage`); tokens. */
export const UsageSchema = z.looseObject({
  inputTokens: count,
  outputTokens: count,
  cacheReadTokens: count,
  cacheWriteTokens: count,
  reasoningTokens: count,
  totalTokens: count,
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
});
export type PdUsage = z.infer<typeof UsageSchema>;

/** `modelSystem` of a persisted system row. */
export const ModelSystemSchema = z.looseObject({
  version: z.number(),
  messageJson: z.string(),
  beforeMessageId: z.string().optional(),
  afterMessageId: z.string().optional(),
});
export type ModelSystem = z.infer<typeof ModelSystemSchema>;

export const MetaSchema = z.looseObject({
  status: z.string().optional(),
  modelId: z.string().optional(),
  providerId: z.string().optional(),
  usage: UsageSchema.optional(),
  parentToolCallId: z.string().optional(),
  agentName: z.string().optional(),
  error: z.unknown().optional(),
  modelSystem: ModelSystemSchema.optional(),
});

/** A transcript block: `text`, `thinking`, `tool_call` (`callId`, `args`, `result`, `status`), `attachment`. */
export const BlockSchema = z.looseObject({ type: z.string() });

export const MessageLineSchema = z.looseObject({
  type: z.literal('message'),
  id: z.string(),
  role: z.string(),
  toolName: z.string().optional(),
  isError: z.boolean().optional(),
  blocks: z.array(BlockSchema).default([]),
  meta: MetaSchema.optional(),
  createdAt: hostIsoTime,
  modelSystem: ModelSystemSchema.optional(),
});
export type PdMessage = z.infer<typeof MessageLineSchema>;

export const CompactionLineSchema = z.looseObject({
  type: z.literal('compaction'),
  id: z.string(),
  summary: z.string(),
  firstKeptMessageId: z.string().optional(),
  throughMessageId: z.string().optional(),
  tokensBefore: optionalHostNumber,
  usage: UsageSchema.optional(),
  details: z.looseObject({ systemMessageJson: z.string().optional() }).optional(),
  providerId: z.string().optional(),
  modelId: z.string().optional(),
  createdAt: hostIsoTime,
});
export type PdCompaction = z.infer<typeof CompactionLineSchema>;

const ToolDeclSchema = z.looseObject({ name: z.string(), description: z.string().optional(), parameters: z.unknown().optional() });

/** pi-ai `SystemMessage` (`readSystemMessage`). */
export const SystemMessageSchema = z.looseObject({
  role: z.literal('system'),
  content: z.string(),
  timestamp: z.number().optional(),
  sections: z.record(z.string(), z.string().nullable()).optional(),
  toolsAdded: z.array(ToolDeclSchema).optional(),
  toolsRemoved: z.array(z.looseObject({ name: z.string() })).optional(),
});
export type SystemMessage = z.infer<typeof SystemMessageSchema>;
export type ToolDecl = z.infer<typeof ToolDeclSchema>;
