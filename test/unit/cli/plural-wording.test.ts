/**
 * The text report words its counts through the one helper (src/plural.ts): a session of one
 * request says "1 request", Claude Code's verdicts on one request "1 request", one system delta
 * "1 in 1 request" (they said "1 requests" and "1 request(s)").
 */
import assert from 'node:assert/strict';
import { runCli } from '../../runCli.js';

/** The lines of the text report's session whose header line includes `header`, up to the next session. */
async function sessionLines(path: string, header: string): Promise<string[]> {
  const r = await runCli(['analyze', '--no-cache', path]);
  assert.equal(r.code, 0, r.err);
  const start = r.outLines.findIndex((l) => l.includes(' session ') && l.includes(header));
  assert.ok(start >= 0, r.out);
  const next = r.outLines.findIndex((l, i) => i > start && /^\S+ session /.test(l));
  return r.outLines.slice(start, next < 0 ? undefined : next);
}

describe('counts in the text report (cli/text.ts)', () => {
  it('the OpenCode sub-agent session (one request): "1 request, evidence: reconstructed" (it said "1 requests")', async () => {
    const lines = await sessionLines('test/fixtures/opencode', '"Scripted subtask (@general subagent)"');
    assert.equal(lines[2], '  1 request on 2026-12-01 (UTC), evidence: reconstructed');
    assert.equal(lines.find((l) => l.startsWith('  totals: ')), '  totals: read 0, write 5974, uncached 0, output 17 tokens; hit rate 0.0%; 0 breaks; re-billed ~0 tokens');
  });

  it('the Claude Code sub-agent (one request with its verdict): "Claude Code cache diagnostics: 1 request" (it said "1 request(s)")', async () => {
    const lines = await sessionLines('test/fixtures/claude-code', '"general-purpose: Scripted sub-task"');
    assert.equal(lines[2], '  1 request on 2026-12-01 (UTC), evidence: reconstructed');
    assert.ok(lines.includes('  Claude Code cache diagnostics: 1 request; 1 agree with our verdict, 0 disagree'), lines.join('\n'));
  });

  it('PI-Desktop "Parser review (Sonnet)" (one system delta): "system deltas: 1 in 1 request" (it said "1 request(s)")', async () => {
    const lines = await sessionLines('test/fixtures/pi-desktop', '"Parser review (Sonnet)"');
    assert.ok(
      lines.includes('  system deltas: 1 in 1 request; re-billed collapsed ~1516 tokens ($0.00523) vs mid-conversation ~0 tokens; sent collapsed; kept in place saves ~1516 tokens'),
      lines.join('\n'),
    );
  });
});
