/** Display formatting only (numbers, money, durations); every figure comes from the view model. */
import { duration as reportDuration } from '../src/report/reason.js';

/** Tokens with en-US grouping: 12,345. */
export function tokens(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US');
}

/** USD with enough digits for sub-cent break costs: $0.00418. */
export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n === 0) return '$0';
  return `$${n < 0.1 ? n.toFixed(5) : n.toFixed(2)}`;
}

/** A 0..1 ratio as a percentage: 58.6 %. */
export function percent(x: number | null | undefined): string {
  return x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)} %`;
}

/** A duration in ms: 850 ms, 12 s, 4 min 12 s, 1 h 3 min (the report's own wording, src/report/reason.ts). */
export function duration(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '—' : reportDuration(ms);
}

/** ISO time → local "YYYY-MM-DD HH:MM:SS" (the report's own times, shown in the viewer's zone). */
export function time(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (x: number) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Bytes: 1,234 B. */
export function bytes(n: number): string {
  return `${Math.round(n).toLocaleString('en-US')} B`;
}
