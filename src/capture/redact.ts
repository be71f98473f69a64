/**
 * Credentials out of what the capture proxy saves: request headers and URLs. The body is saved byte
 * for byte (it is the evidence); hosts send their keys in headers, never in the body. Pure.
 */

/** Header names whose value is a credential: the known ones and anything key/token/secret-like. */
const CREDENTIAL_NAME = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key)$|key|token|secret|passw|credential|auth|session-?cookie|signature/i;

/** The value saved in place of a credential. */
export const REDACTED = '<redacted>';

/** True when a header (name, case-insensitive) carries a credential. */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/**
 * Request headers as saved: every credential header's value replaced by `<redacted>`, the rest as
 * received (Node's lower-cased names; repeated headers joined by `, `).
 */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out[k] = isCredentialHeader(k) ? REDACTED : Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** A request path with the values of credential-like query parameters (`?key=…`, Gemini style) replaced. */
export function redactPath(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const k of [...params.keys()]) if (isCredentialHeader(k)) params.set(k, REDACTED);
  return `${url.slice(0, q)}?${params.toString()}`;
}
