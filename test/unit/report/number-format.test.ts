import assert from 'node:assert/strict';
import fc from 'fast-check';
import { n } from '../../../src/report/reason.js';

describe('reason numbers (en-US grouping without Intl)', () => {
  it('equal Math.round(x).toLocaleString("en-US") for every number', () => {
    const edges = [0, -0, 0.4, -0.4, 0.5, -0.5, 999, 999.5, 1000, -1000, 123456789, -987654321.2, 2 ** 53 - 1, -(2 ** 53) + 1, 2 ** 53, 1e21, -1e300, NaN, Infinity, -Infinity];
    for (const x of edges) assert.equal(n(x), Math.round(x).toLocaleString('en-US'), String(x));
    fc.assert(fc.property(fc.double(), (x) => n(x) === Math.round(x).toLocaleString('en-US')), { numRuns: 20_000 });
    fc.assert(fc.property(fc.integer({ min: -1e12, max: 1e12 }), (x) => n(x) === x.toLocaleString('en-US')), { numRuns: 20_000 });
  });
});
