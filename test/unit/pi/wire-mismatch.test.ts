import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readPiSession } from '../../../src/hosts/pi/index.js';

describe('pi reader: --requests from another session', () => {
  it('ignores bodies none of which matches an assistant entry, with an error naming the folder', async () => {
    // Both recordings have claude-sonnet-4-5 requests on anthropic-messages: matching by order,
    // api and model alone took 35 OpenCode bodies for this session's (48 requests instead of 13).
    const dir = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
    const file = join(dir, readdirSync(dir)[0]);
    const s = await readPiSession(file, { requestsDir: 'test/fixtures/opencode/requests' });
    assert.equal(s.requests.length, 13);
    assert.ok(s.requests.every((r) => r.evidence === 'reconstructed'));
    const d = s.diagnostics.find((x) => x.severity === 'error')!;
    assert.equal(d.file, 'test/fixtures/opencode/requests');
    assert.match(d.message, /^none of the 39 captured bodies matches an assistant entry/);
  });
});
