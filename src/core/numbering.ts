/**
 * Request numbers: the name a request goes by on every surface (text report, `--json` `number`,
 * the Timeline, Problems entries, `check`, `diff` arguments, "vs #N"), the same whatever the
 * evidence. Agent-loop requests are numbered 1, 2, 3… in send order, counting them only; every
 * other request is `N.k`, the k-th such request sent after agent request N (`0.k` before the
 * first): a request the host made besides the agent loop (`kind` summary or title: a compaction or
 * branch summary, a title), and one only the captured bodies show where the session has a
 * transcript (`wireOnly`: e.g. a failed attempt the host retried without recording it). The
 * transcript (reconstructed evidence) and the bodies the host sent (wire) hold the same recorded
 * agent requests, so each keeps its number when the wire adds requests between them; the
 * send-order `index` is a position in one report only.
 */
import type { LlmRequest } from './model.js';

/** What numbering reads of a request. */
export type Numbered = Pick<LlmRequest, 'kind' | 'wireOnly'>;

/** Whether `r` is numbered as an agent-loop request (a whole number) rather than `N.k`. */
function isAgentStep(r: Numbered): boolean {
  return r.kind === 'agent' && !r.wireOnly;
}

/** Numbers requests one by one in send order (the judge keeps one; its state is `{ agents, sides }`). */
export class RequestNumbering {
  /**
   * @param agents agent requests numbered so far
   * @param sides side requests numbered since the last agent request
   */
  constructor(
    private agents = 0,
    private sides = 0,
  ) {}

  /** The number of the next request `r` (e.g. `9`, or `8.2` for the second other request after #8). */
  next(r: Numbered): string {
    if (isAgentStep(r)) {
      this.sides = 0;
      return String(++this.agents);
    }
    return `${this.agents}.${++this.sides}`;
  }

  /** The counters in plain data (JudgeState.numbering). */
  state(): { agents: number; sides: number } {
    return { agents: this.agents, sides: this.sides };
  }
}

/**
 * A request number as a user types it (`9`, `8.1`, `#8.1`; leading zeros dropped), in its
 * canonical form, or null when the text is not one: a positive whole number, or a whole number
 * ≥ 0, a dot and a positive whole number, each part digits only (no sign, spaces or exponent) and
 * at most 2^53 − 1.
 */
export function parseRequestNumber(text: string): string | null {
  const m = /^#?(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) return null;
  const part = (x: string) => (Number.isSafeInteger(Number(x)) ? String(Number(x)) : null);
  const agent = part(m[1]);
  if (agent === null) return null;
  if (m[2] === undefined) return agent === '0' ? null : agent;
  const side = part(m[2]);
  return side === null || side === '0' ? null : `${agent}.${side}`;
}
