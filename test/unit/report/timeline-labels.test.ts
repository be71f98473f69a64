import assert from 'node:assert/strict';
import { AXIS_GAP, axisStep, fitLabel, MAX_CONDENSE, phuxLabels } from '../../../media/labels.js';

/** A stand-in for the canvas's measureText at 10px: 6 px per character. */
const measure = (t: string) => 6 * [...t].length;

describe('Timeline canvas labels (media/labels.ts): drawn only where they fit', () => {
  it('spaces the axis numbers so the widest never touches the next: the 13 requests of the Pi main recording', () => {
    // "13" is 12 px wide + the 6 px gap: every column at 44 px (a wide panel), every 2nd at 14 px (the narrowest).
    assert.equal(axisStep(44, measure('13')), 1);
    assert.equal(axisStep(18, measure('13')), 1);
    assert.equal(axisStep(17, measure('13')), 2);
    assert.equal(axisStep(14, measure('13')), 2);
    // 10,000 requests at 14 px: "10000" is 30 px, so every 5th column (70 px ≥ 36 px); 100,000 needs every 5th too (42 px).
    assert.equal(axisStep(14, measure('10000')), 5);
    assert.equal(axisStep(14, measure('100000')), 5);
    assert.equal(axisStep(3, measure('100000')), 20);
    assert.equal(AXIS_GAP, 6);
  });

  it('takes the longest form that fits, condensed by at most 15 %, else none', () => {
    // "history" is 42 px: whole in 42, condensed to 36 (85 %) at the least.
    assert.equal(fitLabel(['history', 'h'], 42, measure), 'history');
    assert.equal(fitLabel(['history', 'h'], 35.7, measure), 'history');
    assert.equal(fitLabel(['history', 'h'], 35.6, measure), 'h');
    assert.equal(fitLabel(['history'], 5, measure), null);
    assert.equal(MAX_CONDENSE, 0.15);
  });

  it('offers the phux marks of request #9 of the Pi main recording (checkpoint 4, delta 5) from "C4 Δ5" down to "CΔ"', () => {
    const msgs = [{ kind: 'checkpoint', seq: 4 }, { kind: 'delta', seq: 5 }] as const;
    assert.deepEqual(phuxLabels(msgs, false), ['C4 Δ5', 'C4Δ5', 'Δ5+', 'CΔ']);
    assert.deepEqual(phuxLabels(msgs, true), ['C4 Δ5!', 'C4Δ5!', 'Δ5+!', 'CΔ!']);
    // A 44 px column holds the whole; a 26 px one the marks without the space; the narrowest (14 px, 12 px of text) only the kinds.
    assert.equal(fitLabel(phuxLabels(msgs, false), 42, measure), 'C4 Δ5');
    assert.equal(fitLabel(phuxLabels(msgs, false), 24, measure), 'C4Δ5');
    assert.equal(fitLabel(phuxLabels(msgs, false), 16, measure), 'Δ5+');
    assert.equal(fitLabel(phuxLabels(msgs, false), 12, measure), 'CΔ');
    assert.deepEqual(phuxLabels([{ kind: 'delta', seq: 12 }], false), ['Δ12', 'Δ']);
    assert.deepEqual(phuxLabels([], false), []);
  });
});
