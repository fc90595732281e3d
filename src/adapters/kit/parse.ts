/**
 * What the JSON adapters' parsers share: the error a layout they do not know throws, the guard
 * that turns it into `changed` (a 502, never an answer full of nulls), and the small readers
 * every mapper uses.
 */
import type { ParseOutcome } from './types.ts';

/** A layout the parser does not know: becomes `changed`. */
export class ShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeError';
  }
}

export { isObject, type Json } from '../../core/json.ts';

/** Epoch seconds (a float) as ISO 8601 UTC with microseconds and `Z` (contract §1). */
export function isoFromEpochSeconds(seconds: number): string {
  const micros = Math.round(seconds * 1_000_000);
  const whole = Math.floor(micros / 1_000_000);
  return `${new Date(whole * 1000).toISOString().slice(0, 19)}.${String(micros - whole * 1_000_000).padStart(6, '0')}Z`;
}

/** Runs a mapper on a readable answer's value (other outcomes pass through); a ShapeError is `changed`. */
export function mapReadable<T>(answer: ParseOutcome<unknown>, map: (value: unknown) => ParseOutcome<T>): ParseOutcome<T> {
  if (answer.kind !== 'ok') return answer as ParseOutcome<T>;
  try {
    return map(answer.value);
  } catch (error) {
    if (error instanceof ShapeError) return { kind: 'changed', reason: error.message };
    throw error;
  }
}
