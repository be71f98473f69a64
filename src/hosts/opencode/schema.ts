/**
 * zod schemas of OpenCode's stored session data, checked at the boundary (rows and JSON files).
 *
 * Source of truth: `@opencode-ai/sdk@1.18.33` `dist/v2/gen/types.gen.d.ts` and
 * `packages/opencode/src/session/message-v2.ts` (shared/reference/opencode.md §1.3). In the
 * database the `data` column holds the object without `id`, `sessionID` (and `messageID` for
 * parts); the legacy JSON files (< 1.2) hold the whole object. Objects are loose: fields this
 * reader does not use are kept, unknown part types are reported by the reader, not rejected here.
 */
import { z } from 'zod';
import { hostNumber, optionalHostNumber, type ValueSpec } from '../numbers.js';

const TOKENS: ValueSpec = { total: 'count', input: 'count', output: 'count', reasoning: 'count', cache: { read: 'count', write: 'count' } };
/**
 * The token counts, costs and times of a message's data (a `message` row's JSON, a message
 * file), checked before its schema (numbers.ts checkHostValues): a bad one is null, with one
 * warning at the row or file.
 */
export const OC_MESSAGE_VALUES: ValueSpec = { time: { created: 'ms', completed: 'ms' }, cost: 'usd', tokens: TOKENS };
/** The same for a part's data (step-finish `tokens`, a text part's `time.start`, a tool's `state.time.compacted`). */
export const OC_PART_VALUES: ValueSpec = { tokens: TOKENS, time: { start: 'ms' }, state: { time: { compacted: 'ms' } } };
/** The same for a session file (`time`, `tokens`). */
export const OC_SESSION_VALUES: ValueSpec = { time: { created: 'ms', updated: 'ms' }, tokens: TOKENS };
/**
 * The same for a `session` row's columns (`packages/opencode/src/session/session.sql.ts`, all
 * NOT NULL: the running sums `cost` and `tokens_*`, `time_created`, `time_updated`), checked as
 * the row is read: a column that is not a number of its kind (SQLite keeps whatever was written:
 * text, NULL, a real for an integer column) is null, with one warning at the row.
 */
export const OC_SESSION_ROW_VALUES: ValueSpec = {
  cost: 'usd',
  tokens_input: 'count',
  tokens_output: 'count',
  tokens_reasoning: 'count',
  tokens_cache_read: 'count',
  tokens_cache_write: 'count',
  time_created: 'ms',
  time_updated: 'ms',
};
/** The times of a `session` row that discovery takes (the ref's mtime and start), checked the same way without a warning (the reader gives it). */
export const OC_SESSION_ROW_TIMES: ValueSpec = { time_created: 'ms', time_updated: 'ms' };

/** `tokens` of an assistant message or a `step-finish` part (units: tokens). */
export const TokensSchema = z.looseObject({
  total: optionalHostNumber,
  input: hostNumber,
  output: hostNumber,
  reasoning: optionalHostNumber,
  cache: z.looseObject({ read: hostNumber, write: hostNumber }).optional(),
});
export type Tokens = z.infer<typeof TokensSchema>;

/** `created` null: not a time (checkHostValues), unknown. */
const TimeSchema = z.looseObject({ created: hostNumber, completed: optionalHostNumber });

export const UserInfoSchema = z.looseObject({
  role: z.literal('user'),
  time: TimeSchema,
  agent: z.string().optional(),
  model: z.looseObject({ providerID: z.string(), modelID: z.string() }).optional(),
  system: z.string().optional(),
});
export type UserInfo = z.infer<typeof UserInfoSchema>;

export const AssistantInfoSchema = z.looseObject({
  role: z.literal('assistant'),
  time: TimeSchema,
  error: z.looseObject({ name: z.string().optional(), data: z.unknown().optional() }).nullish(),
  parentID: z.string().optional(),
  modelID: z.string(),
  providerID: z.string(),
  mode: z.string().optional(),
  agent: z.string().optional(),
  summary: z.boolean().optional(),
  cost: optionalHostNumber,
  tokens: TokensSchema.optional(),
  finish: z.string().optional(),
  variant: z.string().optional(),
});
export type AssistantInfo = z.infer<typeof AssistantInfoSchema>;

export const MessageInfoSchema = z.discriminatedUnion('role', [UserInfoSchema, AssistantInfoSchema]);
export type MessageInfo = z.infer<typeof MessageInfoSchema>;

const Metadata = z.record(z.string(), z.unknown()).optional();

export const TextPartSchema = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
  synthetic: z.boolean().optional(),
  ignored: z.boolean().optional(),
  time: z.looseObject({ start: optionalHostNumber }).optional(),
  metadata: Metadata,
});
export const ReasoningPartSchema = z.looseObject({ type: z.literal('reasoning'), text: z.string(), metadata: Metadata });
export const FilePartSchema = z.looseObject({ type: z.literal('file'), mime: z.string(), url: z.string(), filename: z.string().optional() });
export const ToolStateSchema = z.looseObject({
  status: z.enum(['pending', 'running', 'completed', 'error']),
  input: z.unknown().optional(),
  output: z.string().optional(),
  error: z.string().optional(),
  metadata: Metadata,
  time: z.looseObject({ compacted: optionalHostNumber }).optional(),
  attachments: z.array(z.looseObject({ mime: z.string(), url: z.string(), filename: z.string().optional() })).optional(),
});
export const ToolPartSchema = z.looseObject({ type: z.literal('tool'), callID: z.string(), tool: z.string(), state: ToolStateSchema, metadata: Metadata });
export const StepFinishPartSchema = z.looseObject({ type: z.literal('step-finish'), tokens: TokensSchema.optional(), reason: z.string().optional() });
export const CompactionPartSchema = z.looseObject({
  type: z.literal('compaction'),
  auto: z.boolean().optional(),
  overflow: z.boolean().optional(),
  tail_start_id: z.string().optional(),
});
export const SubtaskPartSchema = z.looseObject({ type: z.literal('subtask'), prompt: z.string().optional(), description: z.string().optional(), agent: z.string().optional() });
/** Part types with no fields this reader needs. */
export const PlainPartSchema = z.looseObject({ type: z.enum(['step-start', 'snapshot', 'patch', 'agent', 'retry']) });

export const PartSchema = z.discriminatedUnion('type', [
  TextPartSchema,
  ReasoningPartSchema,
  FilePartSchema,
  ToolPartSchema,
  StepFinishPartSchema,
  CompactionPartSchema,
  SubtaskPartSchema,
  PlainPartSchema,
]);
export type Part = z.infer<typeof PartSchema>;
export type TextPart = z.infer<typeof TextPartSchema>;
export type ToolPart = z.infer<typeof ToolPartSchema>;

/** Every part type OpenCode 1.18.33 defines (others are reported as unknown and ignored). */
export const KNOWN_PART_TYPES: ReadonlySet<string> = new Set([
  'text',
  'reasoning',
  'file',
  'tool',
  'step-start',
  'step-finish',
  'snapshot',
  'patch',
  'agent',
  'compaction',
  'subtask',
  'retry',
]);

/** Session info: the `session` row (columns) or the legacy `storage/session/<project>/<id>.json`. */
export const SessionInfoSchema = z.looseObject({
  id: z.string(),
  title: z.string().optional(),
  directory: z.string().optional(),
  parentID: z.string().nullish(),
  version: z.string().optional(),
  time: z.looseObject({ created: optionalHostNumber, updated: optionalHostNumber }).optional(),
  /** USD: the `cost` column's running sum (a row), absent in the legacy files. */
  cost: optionalHostNumber,
  tokens: TokensSchema.optional(),
});
export type SessionInfo = z.infer<typeof SessionInfoSchema>;
