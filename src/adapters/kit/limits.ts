/**
 * Bounds on what an upstream may hand an adapter (issue 33). An upstream is untrusted: a broken
 * or hostile one may answer a list of 60,000 items where a page of 25 was asked for, or a number
 * of four million digits where a balance fits in 78.
 *
 * - Lists: every list an adapter returns from an upstream is cut to the page the endpoint
 *   documents (or to a documented cap) in the pure parse step, before its items are mapped, so
 *   the work and the answer stay bounded whatever the upstream sent. Items that map to nothing
 *   (an ad, a promoted entry, a kind the parser skips) cost a cheap look, never a full mapping,
 *   once the page is full.
 * - Numbers: an amount is at most 256 bits (the EVM word; no chain's supply, balance or token
 *   amount needs more). Its digits are counted before anything converts them, since turning a
 *   string of millions of digits into a BigInt or back into decimal holds the event loop for
 *   seconds.
 *
 * docs/reliability.md ("Limits on hostile input") lists every cap and why it was chosen.
 */
import { ShapeError } from './parse.ts';

/** The largest page any endpoint documents (`limit` 1..100, `per_page` 10..100): the default cap on a list from an upstream. */
export const MAX_PAGE_ITEMS = 100;

/**
 * Lists inside one item (a project's skills, a video's keywords and thumbnails, a post's media, a
 * comment's replies at each level): no real item comes near it; a hostile one cannot multiply
 * the answer by more.
 */
export const MAX_NESTED_ITEMS = 100;

/** The first `cap` entries of an upstream list, before any of them is read; a value that is not a list is empty. */
export function firstItems<T>(list: readonly T[], cap: number = MAX_PAGE_ITEMS): T[] {
  return list.length > cap ? list.slice(0, cap) : list.slice();
}

/**
 * Maps an upstream list in order and keeps at most `cap` results: an entry mapped to `undefined`
 * is skipped (and does not count), and the walk stops as soon as `cap` results are kept.
 */
export function mapUpTo<T, R>(list: Iterable<T>, cap: number, map: (item: T, index: number) => R | undefined): R[] {
  const kept: R[] = [];
  if (cap <= 0) return kept;
  let index = 0;
  for (const item of list) {
    const mapped = map(item, index++);
    if (mapped === undefined) continue;
    kept.push(mapped);
    if (kept.length >= cap) break;
  }
  return kept;
}

/**
 * A list that stops growing at `cap`, for parsers that collect items from nested walks (sections
 * of sections, modules of a timeline, an HTML page's result blocks): `add` answers whether there
 * is still room, so a walk can stop early, and `full` says when to stop looking.
 */
export class CappedList<T> {
  readonly items: T[] = [];
  readonly cap: number;

  constructor(cap: number = MAX_PAGE_ITEMS) {
    this.cap = cap;
  }

  get full(): boolean {
    return this.items.length >= this.cap;
  }

  /** Adds `item` when there is room; answers whether there is room left after it. */
  add(item: T): boolean {
    if (this.items.length < this.cap) this.items.push(item);
    return this.items.length < this.cap;
  }
}

/** Hex digits of the largest 256-bit value. */
export const MAX_UINT256_HEX_DIGITS = 64;
/** Decimal digits of the largest 256-bit value (2^256 − 1 has 78). */
export const MAX_UINT256_DECIMAL_DIGITS = 78;
const MAX_UINT256 = (1n << 256n) - 1n;

/**
 * A hex quantity (`0x1a`, JSON-RPC's encoding) of at most 256 bits, as a BigInt. Its length is
 * checked before anything reads its digits: a longer one throws a ShapeError (a `changed`
 * verdict), however many leading zeros it carries (JSON-RPC quantities carry none).
 */
export function uint256FromHex(value: unknown, what: string): bigint {
  if (typeof value !== 'string') throw new ShapeError(`${what} is not a hex quantity`);
  if (value.length > 2 + MAX_UINT256_HEX_DIGITS) throw new ShapeError(`${what} is above 256 bits (${value.length - 2} hex digits)`);
  if (!/^0x[0-9a-fA-F]+$/.test(value)) throw new ShapeError(`${what} is not a hex quantity`);
  return BigInt(value);
}

/**
 * A whole number written in decimal (an indexer's `value`, an Esplora amount given as text) of at
 * most 256 bits, as a BigInt; the digits are counted before the conversion. Anything else throws
 * a ShapeError.
 */
export function uint256FromDecimal(value: unknown, what: string): bigint {
  if (typeof value !== 'string') throw new ShapeError(`${what} is not a whole number`);
  if (value.length > MAX_UINT256_DECIMAL_DIGITS) throw new ShapeError(`${what} is above 256 bits (${value.length} digits)`);
  if (!/^\d+$/.test(value)) throw new ShapeError(`${what} is not a whole number`);
  const number = BigInt(value);
  if (number > MAX_UINT256) throw new ShapeError(`${what} is above 256 bits`);
  return number;
}
