/**
 * zod schemas of the DSH session log lines and the botharness.db rows this reader uses.
 *
 * Sources (reference/botharness.md A.1, A.2; the verbatim DSH fixtures in
 * ground-truth/botharness/dsh-session-logs, toninfo/deepseek-harness @ 611615650f1b):
 *  - header `{type:'session', version, id, createdAt, cwd?, parentSession?, agentPreset?, …}`;
 *  - events `{type, seq, time, data, surfaceOp?, sourceEventSeqs?, ignorable?}`;
 *  - packed chunk rows (`text-chunks` / `reasoning-chunks` / `tool-call-chunks`) `{type, seq0, time0, data}`;
 *  - `request/header` `{header: {config:{provider, model}, system?, tools?, messagePrefix?}, reason}`;
 *  - `system/message` (log v3+): a system message `{role?, content:[{type:'text', text}], source}`
 *    (as `data` or `data.message`), `surfaceOp` `'append'` or `{op:'replace', start, end}`;
 *  - `assistant/message` `{turn, step, content, provenance|source {provider, model}, usage}`, usage
 *    `{inputTokens (uncached only), outputTokens, cacheReadTokens?, cacheWriteTokens?, reasoningTokens?}`.
 * The `compaction/*` payloads are not in the reference: `compaction/summary` is read as
 * `{summary: string}` (or `{text}` / `{content}`), the others only as boundaries.
 * Objects are loose: fields a later DSH adds are kept and ignored.
 */
import { z } from 'zod';
import { hostNumber, optionalHostNumber, type ValueSpec } from '../numbers.js';

const USAGE: ValueSpec = { inputTokens: 'count', outputTokens: 'count', cacheReadTokens: 'count', cacheWriteTokens: 'count', reasoningTokens: 'count', totalTokens: 'count' };
/**
 * The token counts and times of a log line (header `createdAt`, an event's `time`, an assistant
 * message's or usage chunk's `usage`), checked before its schema (numbers.ts checkHostValues): a
 * bad one is null, with one warning at the line.
 */
export const DSH_VALUES: ValueSpec = { createdAt: 'ms', time: 'ms', data: { usage: USAGE, chunk: { usage: USAGE } } };

/** Log header (line 1). `createdAt` is ms since epoch (null: not a time, unknown). */
export const DshHeaderSchema = z.looseObject({
  type: z.literal('session'),
  version: z.number(),
  id: z.string(),
  createdAt: hostNumber,
  cwd: z.string().optional(),
  parentSession: z.unknown().optional(),
  agentPreset: z.string().optional(),
});
export type DshHeader = z.infer<typeof DshHeaderSchema>;

/** Every event line. */
export const DshEventSchema = z.looseObject({
  type: z.string(),
  seq: z.number(),
  /** ms since epoch; null: not a time (checkHostValues), unknown. */
  time: hostNumber,
  data: z.unknown().optional(),
  surfaceOp: z.unknown().optional(),
  sourceEventSeqs: z.array(z.number()).optional(),
  ignorable: z.boolean().optional(),
});
export type DshEvent = z.infer<typeof DshEventSchema>;

/** Packed chunk rows (several streamed chunks in one line). */
export const PackedChunkSchema = z.looseObject({
  type: z.enum(['text-chunks', 'reasoning-chunks', 'tool-call-chunks']),
  seq0: z.number(),
  time0: z.number(),
  data: z.unknown().optional(),
});

/** DSH `TokenUsage` (counts are disjoint: `inputTokens` is uncached input only). */
export const DshUsageSchema = z.looseObject({
  inputTokens: hostNumber,
  outputTokens: hostNumber,
  cacheReadTokens: optionalHostNumber,
  cacheWriteTokens: optionalHostNumber,
  reasoningTokens: optionalHostNumber,
  totalTokens: optionalHostNumber,
});
export type DshUsage = z.infer<typeof DshUsageSchema>;

/** A content part of a user, assistant or tool message (text, reasoning, tool-call, image, …). */
export const DshPartSchema = z.looseObject({ type: z.string() });

const RouteSchema = z.looseObject({ provider: z.string().optional(), model: z.string().optional() });

/** `request/header` data: the frozen EpochHeader and why it was logged. */
export const RequestHeaderDataSchema = z.looseObject({
  header: z.looseObject({
    config: RouteSchema.optional(),
    system: z.string().optional(),
    tools: z.unknown().optional(),
    messagePrefix: z.array(z.unknown()).optional(),
  }),
  reason: z.string().optional(),
});

/** `system/message` data (log v3+). */
export const SystemMessageDataSchema = z.looseObject({
  content: z.union([z.string(), z.array(DshPartSchema)]).optional(),
  message: z.looseObject({ content: z.union([z.string(), z.array(DshPartSchema)]) }).optional(),
});

/** `user/message` data. `text` is the summarized form of the BotHarness evidence script. */
export const UserMessageDataSchema = z.looseObject({
  content: z.array(DshPartSchema).optional(),
  text: z.string().optional(),
  source: z.looseObject({ kind: z.string().optional() }).optional(),
});

/** `assistant/message` data. */
export const AssistantMessageDataSchema = z.looseObject({
  turn: z.number().optional(),
  step: z.number().optional(),
  content: z.array(DshPartSchema).optional(),
  provenance: RouteSchema.optional(),
  source: RouteSchema.optional(),
  usage: DshUsageSchema.optional(),
  error: z.unknown().optional(),
});

/** `assistant/chunk` data: one streamed chunk (`block-start`, `text-delta`, `block-end`, `usage`, `finish`). */
export const AssistantChunkDataSchema = z.looseObject({
  turn: z.number().optional(),
  step: z.number().optional(),
  chunk: z.looseObject({
    type: z.string(),
    index: z.number().optional(),
    block: DshPartSchema.optional(),
    usage: DshUsageSchema.optional(),
  }),
});

/** `tool/result` data. */
export const ToolResultDataSchema = z.looseObject({
  callId: z.string(),
  content: z.array(DshPartSchema).optional(),
  text: z.string().optional(),
  isError: z.boolean().optional(),
});

/** `compaction/summary` data (shape assumed, see the module comment). */
export const CompactionSummaryDataSchema = z.looseObject({
  summary: z.string().optional(),
  text: z.string().optional(),
  content: z.union([z.string(), z.array(DshPartSchema)]).optional(),
});

/** `session/title` data. */
export const TitleDataSchema = z.looseObject({ title: z.string() });

/**
 * Event types of DSH's vocabulary (`known-event-types.ts`, reference A.1) that carry nothing this
 * reader needs: read silently. Any other type is counted in `ignored` with one diagnostic.
 */
export const QUIET_TYPES = new Set([
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'tool/call',
  'compaction/start',
  'compaction/prune',
  'approval/asked',
  'approval/answered',
  'approval/resolved',
  'llm/retry',
  'session/end-seed',
  'session/title',
  'assistant/attempt',
]);
