/**
 * Settings → provider rules: `prefixLens.ttlSecondsOverrides` and `prefixLens.priceOverrides`
 * applied over the bundled rules (src/core/provider-rules.json). Pure data mapping.
 */
import { defaultRules, type ProviderRules } from '../core/rules.js';

/**
 * `ttlSeconds`: family id → default cache lifetime, seconds. `prices`: checked before the prices a
 * transcript records and the bundled table, `{match: model regex, input, output}` in USD per million tokens.
 */
export interface RuleOverrides {
  ttlSeconds: Record<string, number>;
  prices: Array<{ match: string; input: number; output: number }>;
}

export const NO_OVERRIDES: RuleOverrides = { ttlSeconds: {}, prices: [] };

/** The bundled rules with the overrides applied (the bundled object itself when there are none). */
export function rulesWithOverrides(o: RuleOverrides): ProviderRules {
  if (!Object.keys(o.ttlSeconds).length && !o.prices.length) return defaultRules;
  return {
    ...defaultRules,
    families: defaultRules.families.map((f) =>
      o.ttlSeconds[f.id] > 0 ? { ...f, ttlSeconds: { ...f.ttlSeconds, default: o.ttlSeconds[f.id] } } : f,
    ),
    // The user's prices beat the bundled table and also the prices a transcript records (Pi's usage.cost).
    prices: { models: [...o.prices.map((p) => ({ ...p, override: true })), ...defaultRules.prices.models] },
  };
}
