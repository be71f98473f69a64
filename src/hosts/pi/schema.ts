/**
 * zod schemas for Pi session files (JSONL, format version 1–3), checked per line at the boundary.
 *
 * Source: `@mariozechner/pi-coding-agent` 0.73.1, `packages/coding-agent/src/core/session-manager.ts`
 * l.30-149 (SessionHeader, entry types), `packages/ai/src/types.ts` (message and content shapes),
 * `packages/coding-agent/src/core/messages.ts` (bashExecution, custom, branchSummary,
 * compactionSummary); summarized in reference/pi.md §1. Objects are loose (unknown keys are kept
 * and ignored): Pi adds fields between versions, and the 1.x line adds more (reference/pi.md §5).
 */
import { z } from 'zod';
import { hostIsoTime, hostNumber, optionalHostNumber, type ValueSpec } from '../numbers.js';
import type { JsonLiteral } from '../../core/literal.js';

/** `{"type":"text","text","textSignature"?}`. The Responses API stores `{"v":1,"id":"msg_…"}` JSON in `textSignature`. */
export const TextContentSchema = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
  textSignature: z.string().optional(),
});

/** `{"type":"image","data":<base64>,"mimeType"}`. */
export const ImageContentSchema = z.looseObject({
  type: z.literal('image'),
  data: z.string(),
  mimeType: z.string(),
});

/** `{"type":"thinking","thinking","thinkingSignature"?,"redacted"?}` (Responses: the signature is the reasoning item JSON). */
export const ThinkingContentSchema = z.looseObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  thinkingSignature: z.string().optional(),
  redacted: z.boolean().optional(),
});

/** `{"type":"toolCall","id","name","arguments":{…},"thoughtSignature"?}`. Responses ids are `"<call_id>|<item id>"`. */
export const ToolCallSchema = z.looseObject({
  type: z.literal('toolCall'),
  id: z.string(),
  name: z.string(),
  arguments: z.unknown(),
  thoughtSignature: z.string().optional(),
});

/** Block types with a shape of their own above. */
const KNOWN_BLOCK_TYPES: ReadonlySet<string> = new Set(['text', 'image', 'thinking', 'toolCall']);

/**
 * A content block of a type this reader does not know: kept, passed through as Pi would. A known
 * type whose fields do not fit its shape is not "other" (the union would otherwise hand the
 * normalizer a `text` block whose `textSignature` is an array): the message then fails the schema.
 */
export const OtherContentSchema = z.looseObject({
  type: z.string().refine((t) => !KNOWN_BLOCK_TYPES.has(t), 'a known block type with fields that do not fit it'),
}) as unknown as z.ZodType<OtherContent>;

/** A JSON value as parsed: never a JsonLiteral (a class instance has no index signature). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

/**
 * OtherContentSchema's output, typed so that a tool result's byte-held text block
 * (LiteralTextContent: `text` a JsonLiteral, read.ts holdLiterals) is not one. The loose catch-all
 * (`{type: string, …}`) accepted it, so tool-result content passed where a ContentBlock is
 * expected compiled, and a reader such as normalize.ts `isText` (a string `text`) skipped the
 * text without a word. Now it does not compile: tool-result text is read through `isResultText` /
 * `resultText` (normalize.ts), or `textOf` (core/literal.ts) for the characters.
 */
export interface OtherContent {
  [x: string]: unknown;
  type: string;
  text?: JsonValue;
}

/** Any content block; the known shapes first, then the tolerant fallback. */
export const ContentBlockSchema = z.union([
  TextContentSchema,
  ImageContentSchema,
  ThinkingContentSchema,
  ToolCallSchema,
  OtherContentSchema,
]);

const PI_COST: ValueSpec = { input: 'usd', output: 'usd', cacheRead: 'usd', cacheWrite: 'usd', total: 'usd' };
/**
 * The token counts, costs and times of any Pi line (header, entry, message), checked before its
 * schema (numbers.ts checkHostValues): a bad one is null, with one warning at the line.
 */
export const PI_VALUES: ValueSpec = {
  timestamp: 'iso',
  tokensBefore: 'count',
  message: {
    timestamp: 'ms',
    usage: { input: 'count', output: 'count', cacheRead: 'count', cacheWrite: 'count', totalTokens: 'count', cost: PI_COST },
  },
};

/** Token usage as Pi records it, already normalized per API (reference/pi.md §1 "usage"). Units: tokens; cost: USD. */
export const UsageSchema = z.looseObject({
  input: hostNumber,
  output: hostNumber,
  cacheRead: hostNumber,
  cacheWrite: hostNumber,
  totalTokens: optionalHostNumber,
  cost: z
    .looseObject({
      input: optionalHostNumber,
      output: optionalHostNumber,
      cacheRead: optionalHostNumber,
      cacheWrite: optionalHostNumber,
      total: optionalHostNumber,
    })
    .optional(),
});

export const UserMessageSchema = z.looseObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(ContentBlockSchema)]),
  timestamp: optionalHostNumber,
});

export const AssistantMessageSchema = z.looseObject({
  role: z.literal('assistant'),
  content: z.array(ContentBlockSchema),
  api: z.string(),
  provider: z.string(),
  model: z.string(),
  usage: UsageSchema.optional(),
  /** `stop` | `length` | `toolUse` | `error` | `aborted`. */
  stopReason: z.string(),
  /** ms since epoch, taken when the provider stream starts (just before the HTTP request). */
  timestamp: optionalHostNumber,
  responseId: z.string().optional(),
  errorMessage: z.string().optional(),
});

export const ToolResultMessageSchema = z.looseObject({
  role: z.literal('toolResult'),
  toolCallId: z.string(),
  toolName: z.string().optional(),
  content: z.array(ContentBlockSchema),
  isError: z.boolean().optional(),
  timestamp: optionalHostNumber,
});

export const BashExecutionMessageSchema = z.looseObject({
  role: z.literal('bashExecution'),
  command: z.string(),
  output: z.string(),
  exitCode: z.number().nullish(),
  cancelled: z.boolean().optional(),
  truncated: z.boolean().optional(),
  fullOutputPath: z.string().optional(),
  excludeFromContext: z.boolean().optional(),
  timestamp: optionalHostNumber,
});

/** Extension message (`role:"custom"`; `hookMessage` in v2 files, migrated). `display` does not affect what is sent. */
export const CustomRoleMessageSchema = z.looseObject({
  role: z.literal('custom'),
  customType: z.string(),
  content: z.union([z.string(), z.array(ContentBlockSchema)]),
  display: z.boolean().optional(),
  details: z.unknown().optional(),
  timestamp: optionalHostNumber,
});

/** An AgentMessage of a role this reader knows. */
export const AgentMessageSchema = z.discriminatedUnion('role', [
  UserMessageSchema,
  AssistantMessageSchema,
  ToolResultMessageSchema,
  BashExecutionMessageSchema,
  CustomRoleMessageSchema,
]);

/** Known message roles (a message with another role is counted as ignored `message:<role>`). */
export const KNOWN_ROLES = new Set(['user', 'assistant', 'toolResult', 'bashExecution', 'custom']);

/** First line: `{"type":"session","version":3,"id","timestamp","cwd","parentSession"?}`. A missing version means v1. */
export const HeaderSchema = z.looseObject({
  type: z.literal('session'),
  version: z.number().optional(),
  id: z.string(),
  timestamp: hostIsoTime,
  cwd: z.string().optional(),
  parentSession: z.string().optional(),
});

/** Fields every tree entry has (v2+; v1 entries get them from the in-memory migration). */
export const EntryBaseSchema = z.looseObject({
  type: z.string(),
  id: z.string(),
  parentId: z.string().nullable(),
  /** ISO time the entry was appended (null: not a time, checkHostValues). */
  timestamp: hostIsoTime,
});

/** Type-specific fields per known entry type (`session-manager.ts` l.44-149). */
export const ENTRY_SCHEMAS = {
  message: z.looseObject({ message: z.looseObject({ role: z.string() }) }),
  model_change: z.looseObject({ provider: z.string(), modelId: z.string() }),
  thinking_level_change: z.looseObject({ thinkingLevel: z.string() }),
  compaction: z.looseObject({
    summary: z.string(),
    firstKeptEntryId: z.string().optional(),
    tokensBefore: optionalHostNumber,
    details: z.unknown().optional(),
    fromHook: z.boolean().optional(),
  }),
  branch_summary: z.looseObject({
    fromId: z.string().optional(),
    summary: z.string(),
    details: z.unknown().optional(),
    fromHook: z.boolean().optional(),
  }),
  custom: z.looseObject({ customType: z.string(), data: z.unknown().optional() }),
  custom_message: z.looseObject({
    customType: z.string(),
    content: z.union([z.string(), z.array(ContentBlockSchema)]),
    display: z.boolean().optional(),
    details: z.unknown().optional(),
  }),
  label: z.looseObject({ targetId: z.string(), label: z.string().optional() }),
  session_info: z.looseObject({ name: z.string().optional() }),
} as const;

export type PiEntryType = keyof typeof ENTRY_SCHEMAS;
export type ContentBlock = z.infer<typeof ContentBlockSchema>;
export type TextContent = z.infer<typeof TextContentSchema>;
export type ImageContent = z.infer<typeof ImageContentSchema>;
export type ThinkingContent = z.infer<typeof ThinkingContentSchema>;
export type ToolCall = z.infer<typeof ToolCallSchema>;
export type PiUsage = z.infer<typeof UsageSchema>;
export type UserMessage = z.infer<typeof UserMessageSchema>;
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;
/** A tool result's text block whose long text the reader holds as a JsonLiteral (read.ts, core/literal.ts). */
export interface LiteralTextContent {
  [x: string]: unknown;
  type: 'text';
  text: JsonLiteral;
  textSignature?: string;
}
/** A tool result as read (ToolResultMessageSchema's output): its long texts may be JsonLiterals. */
export interface ToolResultMessage {
  [x: string]: unknown;
  role: 'toolResult';
  toolCallId: string;
  toolName?: string;
  content: Array<ContentBlock | LiteralTextContent>;
  isError?: boolean;
  timestamp?: number | null;
}
export type BashExecutionMessage = z.infer<typeof BashExecutionMessageSchema>;
export type CustomRoleMessage = z.infer<typeof CustomRoleMessageSchema>;
export type AgentMessage = Exclude<z.infer<typeof AgentMessageSchema>, { role: 'toolResult' }> | ToolResultMessage;
export type PiHeader = z.infer<typeof HeaderSchema>;

/** A validated entry: its type-specific fields, discriminated by `type`. */
export type PiEntry =
  | { type: 'message'; message: AgentMessage }
  | ({ type: 'model_change' } & z.infer<(typeof ENTRY_SCHEMAS)['model_change']>)
  | ({ type: 'thinking_level_change' } & z.infer<(typeof ENTRY_SCHEMAS)['thinking_level_change']>)
  | ({ type: 'compaction' } & z.infer<(typeof ENTRY_SCHEMAS)['compaction']>)
  | ({ type: 'branch_summary' } & z.infer<(typeof ENTRY_SCHEMAS)['branch_summary']>)
  | ({ type: 'custom' } & z.infer<(typeof ENTRY_SCHEMAS)['custom']>)
  | ({ type: 'custom_message' } & z.infer<(typeof ENTRY_SCHEMAS)['custom_message']>)
  | ({ type: 'label' } & z.infer<(typeof ENTRY_SCHEMAS)['label']>)
  | ({ type: 'session_info' } & z.infer<(typeof ENTRY_SCHEMAS)['session_info']>);

// ---------------------------------------------------------------------------------------------
// Fast path: the same verdict and the same output as the schemas above, for the common shapes.
// ---------------------------------------------------------------------------------------------

type Check = (v: unknown) => boolean;
/** Object fields in schema order: name, check, optional. */
type Fields = ReadonlyArray<readonly [string, Check, boolean?]>;
interface Shape {
  index: ReadonlyMap<string, number>;
  checks: readonly Check[];
  required: number;
  requiredAt: readonly boolean[];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str: Check = (v) => typeof v === 'string';
const num: Check = (v) => typeof v === 'number' && Number.isFinite(v);
/** hostNumber's verdict (after checkHostValues): a number, or null for unknown. */
const numOrNull: Check = (v) => v === null || num(v);
const bool: Check = (v) => typeof v === 'boolean';
const anything: Check = () => true;
const literal =
  (x: string): Check =>
  (v) =>
    v === x;

function shape(fields: Fields): Shape {
  return {
    index: new Map(fields.map(([k], i) => [k, i])),
    checks: fields.map(([, c]) => c),
    required: fields.filter(([, , opt]) => !opt).length,
    requiredAt: fields.map(([, , opt]) => !opt),
  };
}

/**
 * True when the zod looseObject of this shape accepts `o` and returns it unchanged: every field
 * valid, every required field present, and the keys in the order zod writes its output (the
 * shape's fields in schema order, then unknown keys). Conservative: anything unusual is false.
 */
function fits(o: unknown, s: Shape): boolean {
  if (!isObj(o)) return false;
  let next = 0;
  let extra = false;
  let required = 0;
  for (const k in o) {
    if (k === '__proto__') return false;
    const i = s.index.get(k);
    if (i === undefined) {
      extra = true;
      continue;
    }
    if (extra || i < next || !s.checks[i](o[k])) return false;
    next = i + 1;
    if (s.requiredAt[i]) required++;
  }
  return required === s.required;
}

const TEXT = shape([['type', literal('text')], ['text', str], ['textSignature', str, true]]);
const IMAGE = shape([['type', literal('image')], ['data', str], ['mimeType', str]]);
const THINKING = shape([['type', literal('thinking')], ['thinking', str], ['thinkingSignature', str, true], ['redacted', bool, true]]);
// `arguments` is z.unknown(): required here (an absent one goes to zod, whatever zod decides).
const TOOL_CALL = shape([['type', literal('toolCall')], ['id', str], ['name', str], ['arguments', anything], ['thoughtSignature', str, true]]);
const OTHER = shape([['type', str]]);

/** ContentBlockSchema (union: the first option that accepts wins) accepting `b` unchanged. */
const fitsBlock: Check = (b) => {
  if (!isObj(b)) return false;
  switch (b.type) {
    case 'text':
      return fits(b, TEXT);
    case 'image':
      return fits(b, IMAGE);
    case 'thinking':
      return fits(b, THINKING);
    case 'toolCall':
      return fits(b, TOOL_CALL);
    default:
      return fits(b, OTHER);
  }
};
const blocks: Check = (v) => Array.isArray(v) && v.every(fitsBlock);
const COST = shape([['input', numOrNull, true], ['output', numOrNull, true], ['cacheRead', numOrNull, true], ['cacheWrite', numOrNull, true], ['total', numOrNull, true]]);
const USAGE = shape([['input', numOrNull], ['output', numOrNull], ['cacheRead', numOrNull], ['cacheWrite', numOrNull], ['totalTokens', numOrNull, true], ['cost', (v) => fits(v, COST), true]]);

const FAST_ROLES = new Map<string, Shape>([
  ['user', shape([['role', literal('user')], ['content', (v) => typeof v === 'string' || blocks(v)], ['timestamp', numOrNull, true]])],
  [
    'assistant',
    shape([
      ['role', literal('assistant')],
      ['content', blocks],
      ['api', str],
      ['provider', str],
      ['model', str],
      ['usage', (v) => fits(v, USAGE), true],
      ['stopReason', str],
      ['timestamp', numOrNull, true],
      ['responseId', str, true],
      ['errorMessage', str, true],
    ]),
  ],
  [
    'toolResult',
    shape([
      ['role', literal('toolResult')],
      ['toolCallId', str],
      ['toolName', str, true],
      ['content', blocks],
      ['isError', bool, true],
      ['timestamp', numOrNull, true],
    ]),
  ],
]);

/**
 * `m` itself when AgentMessageSchema would accept it and return an equal object with the same key
 * order (user, assistant and toolResult messages as Pi writes them); undefined otherwise, and the
 * caller then runs the schema. Saves copying every message (and its content) on the hot path.
 */
export function fastAgentMessage(m: Record<string, unknown>): AgentMessage | undefined {
  const s = typeof m.role === 'string' ? FAST_ROLES.get(m.role) : undefined;
  return s && fits(m, s) ? (m as AgentMessage) : undefined;
}

/** EntryBaseSchema's verdict without copying: the fields every tree entry needs, or undefined. */
export function fastEntryBase(o: Record<string, unknown>): { type: string; id: string; parentId: string | null; timestamp?: string | null } | undefined {
  const { type, id, parentId, timestamp } = o;
  if (typeof type !== 'string' || typeof id !== 'string' || (parentId !== null && typeof parentId !== 'string')) return undefined;
  if (timestamp !== undefined && timestamp !== null && typeof timestamp !== 'string') return undefined;
  return { type, id, parentId, timestamp };
}

/** ENTRY_SCHEMAS.message's verdict (its output is not used): `message` is an object with a string role. */
export function fastMessageEntry(o: Record<string, unknown>): boolean {
  return isObj(o.message) && typeof o.message.role === 'string';
}
