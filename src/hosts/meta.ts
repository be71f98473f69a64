/**
 * Sidecar JSON files of a capture folder (`NNN-….meta.json`, one object each), shared by the
 * wire readers: absent is normal (undefined, no diagnostic); anything else that cannot be used — not
 * a regular file, over the size limit, not JSON, not an object — is undefined with a warning at
 * the file, line 1. Depth-bounded like every untrusted JSON (core/depth.ts). The values the readers
 * use are checked (checkMeta): a bad one is dropped with a warning.
 */
import { depthMessage, parseBounded } from '../core/depth.js';
import type { Diagnostic } from '../core/model.js';
import { FILE_LIMITS, fileErrorText, readRegularText } from './files.js';
import { COUNT_RULE, shownValue as shown, validTimeMs, validTokens } from './numbers.js';

const TIME_KEYS = ['receivedAt', 'responseStartedAt', 'responseEndedAt'];
const USAGE_KEYS = ['usage', 'responseUsage'];
const KINDS = new Set(['agent', 'title', 'summary']);

/**
 * Counts of a usage object (and of its `*_details` objects) that are not token counts (a string
 * "12", a boolean, an object, a negative, fractional or huge number, 1e400): their paths and
 * values, each replaced by NaN, which usageFromResponse reads as unknown (null, not 0). A null
 * count is the provider's own "none" (Anthropic's cache fields are nullable) and is left as is.
 */
function badCounts(u: Record<string, unknown>, at: string, out: string[]): void {
  for (const [k, v] of Object.entries(u)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && /details$/.test(k)) badCounts(v as Record<string, unknown>, `${at}.${k}`, out);
    else if (v !== null && v !== undefined && !validTokens(v)) {
      out.push(`${at}.${k} ${shown(v)}`);
      u[k] = NaN;
    }
  }
}

/**
 * The boundary check of a meta object, in place: the values the wire readers use that do not hold
 * what they name are deleted (unknown), and each is named. Times (`receivedAt`,
 * `responseStartedAt`, `responseEndedAt`) must be ISO strings of a time a Date holds; `status` an
 * HTTP status (integer 100–599); `kind` agent, title or summary; `usage`/`responseUsage` objects
 * whose counts (and those of their `…details` objects) are token counts (numbers.ts validTokens):
 * a bad count alone becomes unknown (NaN here, null in the request's usage; see badCounts).
 * @returns one sentence per value deleted (empty when all were fine)
 */
export function checkMeta(meta: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const own = (k: string) => Object.prototype.hasOwnProperty.call(meta, k);
  for (const k of TIME_KEYS) {
    if (!own(k)) continue;
    const v = meta[k];
    if (typeof v !== 'string' || !validTimeMs(Date.parse(v))) {
      problems.push(`${k} ${shown(v)} is not a time`);
      delete meta[k];
    }
  }
  if (own('status') && !(typeof meta.status === 'number' && Number.isInteger(meta.status) && meta.status >= 100 && meta.status <= 599)) {
    problems.push(`status ${shown(meta.status)} is not an HTTP status`);
    delete meta.status;
  }
  if (own('kind') && !(typeof meta.kind === 'string' && KINDS.has(meta.kind))) {
    problems.push(`kind ${shown(meta.kind)} is not agent, title or summary`);
    delete meta.kind;
  }
  for (const k of USAGE_KEYS) {
    if (!own(k) || meta[k] === null) continue;
    const u = meta[k];
    if (!u || typeof u !== 'object' || Array.isArray(u)) {
      problems.push(`${k} ${shown(u)} is not an object`);
      delete meta[k];
      continue;
    }
    const bad: string[] = [];
    badCounts(u as Record<string, unknown>, k, bad);
    if (bad.length) problems.push(`${bad.join(', ')} ${bad.length === 1 ? 'is not a token count' : 'are not token counts'} (${COUNT_RULE})`);
  }
  return problems;
}

/** The warning for a meta's values checkMeta deleted. */
export function metaWarning(file: string, problems: string[]): Diagnostic {
  return { file, line: 1, severity: 'warning', message: `meta values ignored (unknown): ${problems.join('; ')}` };
}

/**
 * Reads one meta file.
 * @returns the object, or undefined (absent, or unusable with a warning in `diagnostics`)
 */
export async function readMetaObject(file: string, diagnostics: Diagnostic[]): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readRegularText(file, FILE_LIMITS.small);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
      diagnostics.push({ file, line: 1, severity: 'warning', message: `meta file ignored: ${fileErrorText(e)}` });
    }
    return undefined;
  }
  try {
    const { value, cut } = parseBounded(text);
    if (cut) diagnostics.push({ file, line: 1, severity: 'warning', message: depthMessage(cut) });
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const problems = checkMeta(value as Record<string, unknown>);
      if (problems.length) diagnostics.push(metaWarning(file, problems));
      return value as Record<string, unknown>;
    }
    diagnostics.push({ file, line: 1, severity: 'warning', message: 'meta file is JSON but not an object; ignored' });
    return undefined;
  } catch (e) {
    diagnostics.push({ file, line: 1, severity: 'warning', message: `meta file is not JSON; ignored: ${fileErrorText(e)}` });
    return undefined;
  }
}
