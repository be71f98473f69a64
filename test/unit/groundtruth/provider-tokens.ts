/**
 * The scripted provider's own token count (scripts/record/fake-provider.mjs `anthropicBlocks` and
 * `tokens`: ceil(UTF-8 bytes / 4) of the blocks' canonical text, cache_control stripped), so a
 * test can say what the recording's provider would have reported for a prefix of a body.
 */

function withoutCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheControl);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'cache_control') out[k] = withoutCacheControl(v);
    return out;
  }
  return value;
}

/**
 * Tokens the scripted provider counts for an Anthropic body's tools and system blocks (the prefix
 * through its last system block).
 * @param body a parsed `/v1/messages` request body
 */
export function headTokens(body: { tools?: unknown[]; system?: string | unknown[] }): number {
  let acc = '';
  for (const tool of body.tools ?? []) acc += `tool:${JSON.stringify(withoutCacheControl(tool))}`;
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  for (const b of system) acc += `system:${JSON.stringify(withoutCacheControl(b))}`;
  return Math.ceil(Buffer.byteLength(acc, 'utf8') / 4);
}
