/**
 * Token and secret-key material. API tokens use Laravel Sanctum 2's format,
 * `<token id>|<40 random [A-Za-z0-9]>`, so clients of the original service keep working.
 * As Sanctum does, only the SHA-256 hex of the random part is stored; a token sent without the
 * `<id>|` prefix is looked up by that hash alone. Secret keys are 48 random characters, stored as
 * SHA-256 too: both are long random strings, so a slow password hash would add nothing.
 */
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomString(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/** Compares two hex digests in constant time. Anything that is not whole hex is unequal:
 *  Buffer.from(…, 'hex') would silently stop at the first bad digit and compare a prefix. */
export function hashesEqual(aHex: string, bHex: string): boolean {
  if (!HEX.test(aHex) || !HEX.test(bHex) || aHex.length !== bHex.length) return false;
  return timingSafeEqual(Buffer.from(aHex, 'hex'), Buffer.from(bHex, 'hex'));
}

export const TOKEN_SECRET_LENGTH = 40;
export const SECRET_KEY_LENGTH = 48;

export function newTokenSecret(): string {
  return randomString(TOKEN_SECRET_LENGTH);
}

export function newSecretKey(): string {
  return randomString(SECRET_KEY_LENGTH);
}

/** Splits a bearer value into Sanctum's parts. `id` is null when the value has no `|`. */
export function parseBearer(value: string): { id: number | null; secret: string } | null {
  if (!value) return null;
  const bar = value.indexOf('|');
  if (bar === -1) return { id: null, secret: value };
  const idText = value.slice(0, bar);
  if (!/^\d{1,15}$/.test(idText)) return null;
  const secret = value.slice(bar + 1);
  return secret ? { id: Number(idText), secret } : null;
}
