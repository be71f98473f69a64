/**
 * Provider caching rules, loaded from `provider-rules.json` (data, with sources per family).
 */
import { z } from 'zod';
import data from './provider-rules.json';
import type { LlmRequest, Prices } from './model.js';
import { ownGet } from './own.js';

/** A tier of the prefix a parameter change invalidates: everything, the system tier and what renders after it, or the messages. */
export type Tier = 'all' | 'system' | 'messages';

const ParamSchema = z.object({ key: z.string(), invalidates: z.enum(['all', 'system', 'messages']), source: z.string() });

const FamilySchema = z.object({
  id: z.string(),
  apis: z.array(z.string()),
  match: z.string(),
  /** Segment order as the provider renders the prefix; messages last (every tier ends with the conversation). */
  renderOrder: z
    .array(z.enum(['tools', 'system', 'messages']))
    .refine((o) => o.length === 3 && new Set(o).size === 3 && o[2] === 'messages', 'renderOrder lists tools and system once each, then messages'),
  breakpoints: z.object({ explicit: z.boolean(), max: z.number().int().min(0), lookbackBlocks: z.number() }),
  minimumTokens: z.array(z.object({ match: z.string(), tokens: z.number() })),
  stepTokens: z.number(),
  ttlSeconds: z.object({ default: z.number(), extended: z.number() }),
  multipliers: z.object({ read: z.number(), write5m: z.number(), write1h: z.number() }),
  /** Cache-relevant request parameters and the tier each invalidates when it changes (with its source). */
  params: z.array(ParamSchema),
  sources: z.array(z.string()),
});
const RulesSchema = z.object({
  families: z.array(FamilySchema),
  fallbacks: z.record(z.string(), z.string()),
  prices: z.object({
    models: z.array(
      z.object({
        match: z.string(),
        input: z.number(),
        output: z.number(),
        /** Set for the user's own prices (settings): they beat the prices a transcript records. */
        override: z.boolean().optional(),
      }),
    ),
  }),
});

/** The caching rules of one provider family (see provider-rules.json for sources). */
export type ProviderFamily = z.infer<typeof FamilySchema>;
/** One cache-relevant parameter of a family: its body key (dotted for a member) and the tier it invalidates. */
export type CacheParam = z.infer<typeof ParamSchema>;
/** The whole rules file. */
export type ProviderRules = z.infer<typeof RulesSchema>;

/** The bundled rules, validated once. @throws ZodError if the bundled file is malformed (a build bug). */
export const defaultRules: ProviderRules = RulesSchema.parse(data);

/** Compiled model patterns of the rules (case-insensitive), by source: the judge asks per request. */
const patterns = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let re = patterns.get(source);
  if (!re) patterns.set(source, (re = new RegExp(source, 'i')));
  return re;
}

/** The family whose rules apply to a model on an API (model regex first, then the API fallback). */
export function familyFor(model: string, api: string, rules: ProviderRules = defaultRules): ProviderFamily {
  const byModel = rules.families.find((f) => f.apis.includes(api) && pattern(f.match).test(model));
  if (byModel) return byModel;
  const id = ownGet(rules.fallbacks, api) ?? ownGet(rules.fallbacks, '*');
  return rules.families.find((f) => f.id === id) ?? rules.families[0];
}

/** Minimum cacheable prompt length (tokens) of a model within its family. */
export function minimumTokens(family: ProviderFamily, model: string): number {
  return family.minimumTokens.find((m) => pattern(m.match).test(model))?.tokens ?? 1024;
}

/** Where a request's prices came from: the user's override, the transcript (host), or the bundled table. */
export type PriceSource = 'override' | 'host' | 'rules';

/**
 * Prices (USD per million tokens) for a request and where they came from: a user override
 * (`override: true` entry) first, then the host's own figures when the transcript has them, else
 * the bundled table; cache rates from the family's multipliers. Null when unknown.
 */
export function priceOf(req: LlmRequest, family: ProviderFamily, rules: ProviderRules = defaultRules): { prices: Prices; source: PriceSource } | null {
  const table = (p: { input: number; output: number }): Prices => ({
    input: p.input,
    output: p.output,
    cacheRead: p.input * family.multipliers.read,
    cacheWrite: p.input * family.multipliers.write5m,
  });
  const own = rules.prices.models.find((m) => m.override && pattern(m.match).test(req.model));
  if (own) return { prices: table(own), source: 'override' };
  if (req.prices) return { prices: req.prices, source: 'host' };
  const p = rules.prices.models.find((m) => pattern(m.match).test(req.model));
  return p ? { prices: table(p), source: 'rules' } : null;
}

/** The prices of {@link priceOf} without their source. */
export function pricesFor(req: LlmRequest, family: ProviderFamily, rules: ProviderRules = defaultRules): Prices | null {
  return priceOf(req, family, rules)?.prices ?? null;
}
