/**
 * Routing, upstream URLs, redaction and the `capture` command's help: the pure parts of the proxy.
 */
import assert from 'node:assert/strict';
import { displayUrl, parseUpstreams, routeOf, upstreamUrl } from '../../../src/capture/route.js';
import { isCredentialHeader, redactHeaders, redactPath } from '../../../src/capture/redact.js';
import { folderName } from '../../../src/capture/store.js';
import { main } from '../../../src/cli/main.js';

describe('capture proxy: routes, upstreams, redaction', () => {
  it('routes by the path’s end (POST only); anything else is forwarded unsaved to the family its headers name', () => {
    assert.deepEqual(routeOf('POST', '/v1/messages', {}), { api: 'anthropic-messages', family: 'anthropic' });
    assert.deepEqual(routeOf('POST', '/v1/messages?beta=true', {}), { api: 'anthropic-messages', family: 'anthropic' });
    assert.deepEqual(routeOf('POST', '/v1/chat/completions', {}), { api: 'openai-completions', family: 'openai' });
    assert.deepEqual(routeOf('POST', '/backend-api/codex/responses', {}), { api: 'openai-responses', family: 'openai' });
    assert.deepEqual(routeOf('POST', '/v1/messages/count_tokens', {}), { api: null, family: 'anthropic' });
    assert.deepEqual(routeOf('GET', '/v1/models', { 'anthropic-version': '2023-06-01' }), { api: null, family: 'anthropic' });
    assert.deepEqual(routeOf('GET', '/v1/models', {}), { api: null, family: 'openai' });
  });

  it('the upstream URL is the base (with its path) followed by the request path and query', () => {
    const u = parseUpstreams(['openai=https://openrouter.ai/api/', 'anthropic=http://127.0.0.1:9/']);
    assert.equal(upstreamUrl(u.openai, '/v1/chat/completions?x=1').href, 'https://openrouter.ai/api/v1/chat/completions?x=1');
    assert.equal(upstreamUrl(u.anthropic, '/v1/messages').href, 'http://127.0.0.1:9/v1/messages');
    assert.deepEqual(Object.fromEntries(Object.entries(parseUpstreams([])).map(([k, v]) => [k, v.href])), { anthropic: 'https://api.anthropic.com/', openai: 'https://api.openai.com/' });
    assert.equal(displayUrl(new URL('https://user:pw@example.com/v1/x?key=s')), 'https://example.com/v1/x');
    assert.throws(() => parseUpstreams(['ftp://x']), /not an http or https URL/);
    assert.throws(() => parseUpstreams(['gemini=https://x']), /unknown family/);
    assert.throws(() => parseUpstreams(['nope']), /not a URL/);
  });

  it('credential headers and query parameters are redacted; the rest is kept', () => {
    for (const h of ['authorization', 'Proxy-Authorization', 'x-api-key', 'api-key', 'cookie', 'x-goog-api-key', 'x-auth-token', 'openai-secret', 'anthropic-oauth']) assert.ok(isCredentialHeader(h), h);
    for (const h of ['x-session-id', 'x-claude-code-session-id', 'anthropic-version', 'user-agent', 'content-type', 'x-stainless-os']) assert.ok(!isCredentialHeader(h), h);
    assert.deepEqual(redactHeaders({ authorization: 'Bearer s', a: ['1', '2'], b: undefined }), { authorization: '<redacted>', a: '1, 2' });
    assert.equal(redactPath('/v1/models/x:generate?key=s3cret&alt=sse'), '/v1/models/x:generate?key=%3Credacted%3E&alt=sse');
    assert.equal(redactPath('/v1/messages'), '/v1/messages');
  });

  it('folders: session-<id> with unsafe characters replaced, else the UTC day', () => {
    assert.equal(folderName('8aa2b6b2-f6a6-44e7', 0), 'session-8aa2b6b2-f6a6-44e7');
    assert.equal(folderName('../../etc', 0), 'session-.._.._etc');
    assert.equal(folderName(null, Date.UTC(2026, 11, 1, 23, 59)), '2026-12-01');
  });

  it('capture --help prints the one line per host; a bad --port is a usage error', async () => {
    const out: string[] = [];
    const err: string[] = [];
    assert.equal(await main(['capture', '--help'], (s) => out.push(s), (s) => err.push(s)), 0);
    const text = out.join('\n');
    assert.match(text, /Claude Code +ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:8711 /);
    assert.match(text, /Codex +base_url = "http:\/\/127\.0\.0\.1:8711\/v1"/);
    assert.match(text, /Pi +"baseUrl": "http:\/\/127\.0\.0\.1:8711\/v1"/);
    assert.match(text, /OpenCode +"options": \{ "baseURL": "http:\/\/127\.0\.0\.1:8711\/v1" \}/);
    assert.equal(await main(['capture', '--port', 'x'], (s) => out.push(s), (s) => err.push(s)), 2);
    assert.match(err.at(-1)!, /--port x: not a port number/);
  });
});
