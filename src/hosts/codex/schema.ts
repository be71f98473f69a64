/**
 * zod schemas for Codex rollout lines (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`), checked
 * per line at the boundary. Each line is `{timestamp, type, payload}` (reference/claude-code-codex.md
 * §2.1; field definitions: openai/codex `codex-rs/protocol/src/protocol.rs`). Objects are loose:
 * Codex adds fields in most releases. Observed on Codex 0.169.0 (test/fixtures/codex): besides
 * the documented lines it writes `token_usage_record` lines, one per model response, with the
 * response id and that response's usage, and `compacted` lines with `replacement_history`.
 */
import { z } from 'zod';
import { hostIsoTime, hostNumber, optionalHostNumber, type ValueSpec } from '../numbers.js';

/** OpenAI token usage as Codex records it (tokens; `input_tokens` includes `cached_input_tokens`). */
export const TokenUsageSchema = z.looseObject({
  input_tokens: hostNumber,
  cached_input_tokens: optionalHostNumber,
  cache_write_input_tokens: optionalHostNumber,
  output_tokens: hostNumber,
  reasoning_output_tokens: optionalHostNumber,
  total_tokens: optionalHostNumber,
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

const TOKENS: ValueSpec = { input_tokens: 'count', cached_input_tokens: 'count', cache_write_input_tokens: 'count', output_tokens: 'count', reasoning_output_tokens: 'count', total_tokens: 'count' };
/**
 * The token counts and times of a rollout line, checked before its schema (numbers.ts
 * checkHostValues): `token_usage_record` `payload.usage`, `token_count` `payload.info.*_usage`.
 */
export const CODEX_VALUES: ValueSpec = { timestamp: 'iso', payload: { timestamp: 'iso', usage: TOKENS, info: { total_token_usage: TOKENS, last_token_usage: TOKENS } } };

export const LineSchema = z.looseObject({
  timestamp: hostIsoTime,
  type: z.string(),
  payload: z.unknown(),
});

export const SessionMetaSchema = z.looseObject({
  id: z.string(),
  /** The session the conversation belongs to (0.169): its own id, a sub-agent's parent's id; Codex sends it as `prompt_cache_key`. */
  session_id: z.string().optional(),
  timestamp: hostIsoTime,
  cwd: z.string().optional(),
  cli_version: z.string().optional(),
  originator: z.string().optional(),
  forked_from_id: z.string().nullish(),
  source: z.unknown().optional(),
  /** The instructions text: `{text}` (0.1xx) or a string; `instructions` in older builds. */
  base_instructions: z.union([z.string(), z.looseObject({ text: z.string() })]).nullish(),
  instructions: z.string().nullish(),
  /**
   * 0.169 forks (`history_mode: "paginated"`): the fork does not copy the parent's history, it
   * names it: the parent rollout's lines before `end_ordinal_exclusive` (1-based line count) are
   * the history the fork goes on from (observed on the recordings).
   */
  history_base: z.looseObject({ thread_id: z.string(), end_ordinal_exclusive: z.number().int().nonnegative().optional(), end_byte_offset: z.number().int().nonnegative().optional() }).nullish(),
});
export type SessionMeta = z.infer<typeof SessionMetaSchema>;

/** A Responses API input item as recorded (`response_item` payload). */
export const ResponseItemSchema = z.looseObject({ type: z.string(), role: z.string().optional() });

/**
 * turn_context (per turn): the model, and the reasoning effort when not the model's default
 * (`effort`; 0.169 also `collaboration_mode.settings.reasoning_effort`). Observed on the 0.169
 * recordings: `-c model_reasoning_effort="high"` gives `effort: "high"` and the body's
 * `reasoning.effort: "high"`; the default gives neither.
 */
export const TurnContextSchema = z.looseObject({
  model: z.string().optional(),
  cwd: z.string().optional(),
  effort: z.unknown().optional(),
  collaboration_mode: z.looseObject({ settings: z.looseObject({ reasoning_effort: z.unknown().optional() }).optional() }).nullish(),
});

export const TokenUsageRecordSchema = z.looseObject({ response_id: z.string().optional(), usage: TokenUsageSchema });

export const TokenCountSchema = z.looseObject({
  type: z.literal('token_count'),
  info: z
    .looseObject({
      total_token_usage: TokenUsageSchema.optional(),
      last_token_usage: TokenUsageSchema.optional(),
    })
    .nullish(),
});

export const CompactedSchema = z.looseObject({ message: z.string().optional(), replacement_history: z.array(ResponseItemSchema).nullish() });
