import assert from 'node:assert/strict';
import { plural, pluralOf } from '../../src/plural.js';

describe('plural: the one wording of a count (src/plural.ts)', () => {
  it('says the singular for exactly 1: "1 request", "1 break", "1 captured request body"', () => {
    assert.equal(plural(1, 'request'), '1 request');
    assert.equal(plural(1, 'break'), '1 break');
    assert.equal(plural(1, 'captured request body'), '1 captured request body');
  });

  it('says the plural for more than 1: "2 requests", "13 breaks", "16 captured request bodies"', () => {
    assert.equal(plural(2, 'request'), '2 requests');
    assert.equal(plural(13, 'break'), '13 breaks');
    assert.equal(plural(16, 'captured request body'), '16 captured request bodies');
  });

  it('says the plural for 0 (and for fractions and negatives): "0 sessions", "0.5 tokens", "-1 tokens"', () => {
    assert.equal(plural(0, 'session'), '0 sessions');
    assert.equal(plural(0.5, 'token'), '0.5 tokens');
    assert.equal(plural(-1, 'token'), '-1 tokens');
  });

  it('spells the irregular endings: entry/entries, body/bodies, match/matches, pass/passes, box/boxes, flash/flashes, key/keys, day/days', () => {
    assert.equal(plural(1, 'entry'), '1 entry');
    assert.equal(plural(2, 'entry'), '2 entries');
    assert.equal(plural(1, 'body'), '1 body');
    assert.equal(plural(3, 'body'), '3 bodies');
    assert.deepEqual(['match', 'pass', 'box', 'flash', 'key', 'day', 'ADR-0067 violation'].map(pluralOf), ['matches', 'passes', 'boxes', 'flashes', 'keys', 'days', 'ADR-0067 violations']);
  });

  it('takes the plural as given where no spelling rule makes it (`many`), and the number as written (`shown`)', () => {
    assert.equal(plural(1, 'child', { many: 'children' }), '1 child');
    assert.equal(plural(2, 'child', { many: 'children' }), '2 children');
    assert.equal(plural(1234, 'token', { shown: '1,234' }), '1,234 tokens');
    assert.equal(plural(1, 'request', { shown: '**1**' }), '**1** request');
  });
});
