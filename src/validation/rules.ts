/**
 * Validation rules with Laravel 8's semantics and exact messages (docs/spec/contract.md §1), each also
 * describing itself as JSON Schema so the same table generates the OpenAPI document.
 *
 * Laravel semantics kept here:
 * - a field that is absent (or an all-blank string) is checked only by implicit rules (`required`);
 * - when an implicit rule fails, the field's other rules are skipped;
 * - otherwise every rule runs and every failure is reported, in the field's rule order;
 * - size rules (`min`, `between`, `max`) compare numbers for numeric fields, lengths for strings.
 */

import { MAX_URL_LENGTH } from '../core/limits.ts';

export type JsonSchema = Record<string, unknown>;

export interface RuleContext {
  /** The whole input, for rules that look at other fields. */
  input: Record<string, unknown>;
  /** Rules of the same field (size rules need to know whether the field is numeric). */
  fieldRules: readonly Rule<any>[];
  /** What rules that look outside the request may use (e.g. resolving a URL's host). */
  services: ValidationServices;
}

export interface ValidationServices {
  /** True when the URL's host is, and resolves only to, public addresses (or is exempted). */
  isPublicUrl(url: string): Promise<boolean>;
}

/**
 * One validation rule. `T` is what a value that passes it is known to be (`string()` → string),
 * or, for a rule with `transform`, what the value becomes: a field's value type is its last
 * transforming rule's `T`, else the intersection over its rules, which types each endpoint's
 * handler input from its schema (pipeline/endpoint.ts).
 */
export interface Rule<T = unknown> {
  readonly name: string;
  /** Never set: carries `T` for the type checker (invariant, so that a list of rules keeps each one's type). */
  readonly valueType?: (value: T) => T;
  /**
   * What the value becomes for the handler (a post URL → the post's id, "12" → 12). Every rule
   * checks the value as sent (trimmed); once all of them passed, the field's last transforming
   * rule turns that same value, or the field's default, into the one the handler reads.
   */
  readonly transform?: (value: unknown) => T;
  /** Implicit rules run on absent fields too (Laravel's "implicit" rules). */
  readonly implicit?: boolean;
  /** Skipped when an earlier rule of the field failed (checks that are only meaningful, or only
   *  affordable, on an otherwise valid value, such as resolving a URL's host). */
  readonly needsValid?: boolean;
  check(value: unknown, context: RuleContext): boolean | Promise<boolean>;
  message(attribute: string, value: unknown, context: RuleContext): string;
  /**
   * What the field should have held, for the 422's `expected` (beside Laravel's `errors`, whose
   * wording is fixed): for rules whose message does not say it ("The selected format is invalid.").
   */
  expected?(value: unknown, context: RuleContext): string;
  describe?(schema: JsonSchema): void;
}

/** A rule that says what the value becomes (see `Rule.transform`). */
export interface TransformRule<T> extends Rule<T> {
  readonly transform: (value: unknown) => T;
}

const NUMERIC_RULES = new Set(['integer', 'numeric']);

/** How messages name a field: its name with underscores as spaces (`per_page` → "per page"). */
export const attributeName = (field: string) => field.replace(/_/g, ' ');
const INTEGER_TEXT = /^[+-]?(0|[1-9]\d*)$/;

/** What fails Laravel's `required`: nothing, null, a blank string, an empty array or object
 *  (PHP decodes both `[]` and `{}` to an empty array). */
export function isBlank(value: unknown): boolean {
  if (isAbsent(value)) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value as object).length === 0;
  return false;
}

/**
 * What an optional field treats as not sent: its rules are skipped and its default applies.
 * Laravel skips a blank string this way; null too when the rule list says `nullable`, which is
 * how optional fields are written. An empty array or object is a value, and fails type rules.
 */
export function isAbsent(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  return typeof value === 'string' && value.trim() === '';
}

export function isIntegerLike(value: unknown): boolean {
  if (typeof value === 'number') return Number.isSafeInteger(value);
  return typeof value === 'string' && INTEGER_TEXT.test(value) && Number.isSafeInteger(Number(value));
}

// PHP's is_numeric: decimal digits with an optional sign, fraction and exponent, surrounding
// whitespace allowed. Unlike Number(), no hexadecimal, binary, "Infinity" or separators.
const NUMERIC_TEXT = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

function isNumericLike(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && NUMERIC_TEXT.test(value);
}

type SizeKind = 'numeric' | 'string' | 'array' | 'file';

const isNumericField = (context: RuleContext) => context.fieldRules.some((r) => NUMERIC_RULES.has(r.name));

/** Laravel's getSize: the value itself only when a numeric field holds a number, else a count or a length. */
function sizeOf(value: unknown, context: RuleContext): number {
  if (isNumericField(context) && isNumericLike(value)) return Number(value);
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'object' && value !== null) return Object.keys(value).length;
  return [...String(value ?? '')].length;
}

/** Laravel's getAttributeType: the message form follows the field's rules, not the value
 *  ("abc" in an integer field fails `between` by length but is told "between 10 and 100."). */
function sizeKind(value: unknown, context: RuleContext): SizeKind {
  if (isNumericField(context)) return 'numeric';
  if (Array.isArray(value) || context.fieldRules.some((r) => r.name === 'array')) return 'array';
  return 'string';
}

const SIZE_UNITS: Record<SizeKind, string> = { numeric: '', string: ' characters', array: ' items', file: ' kilobytes' };

/** The value type `required()` carries: none of its own (it only says the field is there). */
export interface PresenceMark {
  readonly presence: true;
}

/** `required()`: the field must be present, so the handler's input type makes it non-optional. */
export interface RequiredRule extends Rule<PresenceMark> {
  readonly implicit: true;
  readonly requiredField: true;
}

export const required = (): RequiredRule => ({
  requiredField: true,
  name: 'required',
  implicit: true,
  check: (value) => !isBlank(value),
  message: (attr) => `The ${attr} field is required.`,
});

/** `required_without:other`: the field must be present when `other` is not. */
export interface RequiredWithoutRule<O extends string> extends Rule<PresenceMark> {
  readonly implicit: true;
  readonly requiredWithout: O;
}

/** Laravel's `required_without:other`: present (not blank) unless `other` is. */
export const requiredWithout = <const O extends string>(other: O): RequiredWithoutRule<O> => ({
  requiredWithout: other,
  name: 'required_without',
  implicit: true,
  needsValid: false,
  check: (value, ctx) => !isBlank(value) || !isBlank(ctx.input[other]),
  message: (attr) => `The ${attr} field is required when ${attributeName(other)} is not present.`,
});

/** `prohibits:other`: when the field is present, `other` is not. */
export interface ProhibitsRule<O extends string> extends Rule<unknown> {
  readonly prohibits: O;
}

/** Laravel's `prohibits:other`: a field that is present forbids `other` (reported whatever the field's other rules found). */
export const prohibits = <const O extends string>(other: O): ProhibitsRule<O> => ({
  prohibits: other,
  name: 'prohibits',
  needsValid: false,
  check: (_value, ctx) => isBlank(ctx.input[other]),
  message: (attr) => `The ${attr} field prohibits ${attributeName(other)} from being present.`,
});

export const string = (): Rule<string> => ({
  name: 'string',
  check: (value) => typeof value === 'string',
  message: (attr) => `The ${attr} must be a string.`,
  describe: (s) => void (s.type ??= 'string'),
});

export const integer = (): TransformRule<number> => ({
  name: 'integer',
  check: isIntegerLike,
  transform: (value) => Number(value),
  message: (attr) => `The ${attr} must be an integer.`,
  describe: (s) => void (s.type = 'integer'),
});

export const boolean = (): TransformRule<boolean> => ({
  name: 'boolean',
  check: (value) => [true, false, 0, 1, '0', '1'].includes(value as never),
  transform: (value) => value === true || value === 1 || value === '1',
  message: (attr) => `The ${attr} field must be true or false.`,
  describe: (s) => void (s.type = 'boolean'),
});

/**
 * Laravel's `array` for a JSON list of strings (`The urls must be an array.`): the handler gets its
 * items as strings. What each item must be (a URL, a pattern, an address) is checked by the row,
 * keyed `<field>.<n>` as Laravel keys array items, and refuses an item that is not a string, so
 * none is ever left out here; `items` describes them in the OpenAPI document.
 */
export const stringList = (items: JsonSchema = { type: 'string' }): TransformRule<string[]> => ({
  name: 'array',
  check: (value) => Array.isArray(value),
  transform: (value) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []),
  message: (attr) => `The ${attr} must be an array.`,
  needsValid: true,
  describe: (s) => void Object.assign(s, { type: 'array', items }),
});

export const object = (): Rule<Record<string, unknown>> => ({
  name: 'array',
  check: (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  message: (attr) => `The ${attr} must be an array.`,
  describe: (s) => void (s.type = 'object'),
});

export const min = (limit: number): Rule => ({
  name: 'min',
  check: (value, ctx) => sizeOf(value, ctx) >= limit,
  message: (attr, value, ctx) => {
    const kind = sizeKind(value, ctx);
    return kind === 'array' ? `The ${attr} must have at least ${limit} items.` : `The ${attr} must be at least ${limit}${SIZE_UNITS[kind]}.`;
  },
  describe: (s) => void (s.type === 'string' ? (s.minLength = limit) : (s.minimum = limit)),
});

export const max = (limit: number): Rule => ({
  name: 'max',
  check: (value, ctx) => sizeOf(value, ctx) <= limit,
  message: (attr, value, ctx) => {
    const kind = sizeKind(value, ctx);
    return kind === 'array'
      ? `The ${attr} must not have more than ${limit} items.`
      : `The ${attr} must not be greater than ${limit}${SIZE_UNITS[kind]}.`;
  },
  describe: (s) => void (s.type === 'string' ? (s.maxLength = limit) : (s.maximum = limit)),
});

export const between = (low: number, high: number): Rule => ({
  name: 'between',
  check: (value, ctx) => {
    const size = sizeOf(value, ctx);
    return size >= low && size <= high;
  },
  message: (attr, value, ctx) => {
    const kind = sizeKind(value, ctx);
    return kind === 'array'
      ? `The ${attr} must have between ${low} and ${high} items.`
      : `The ${attr} must be between ${low} and ${high}${SIZE_UNITS[kind]}.`;
  },
  describe: (s) => {
    if (s.type === 'string') Object.assign(s, { minLength: low, maxLength: high });
    else Object.assign(s, { minimum: low, maximum: high });
  },
});

/** PHP's string cast: true is "1", false is "". */
const phpString = (value: string | number | boolean) => (typeof value === 'boolean' ? (value ? '1' : '') : String(value));

/** Laravel's `in`: compares the value as a string, case-sensitively. */
export const oneOf = <const T extends string>(allowed: readonly T[]): Rule<T> => {
  const set = new Set<string>(allowed);
  return {
    name: 'in',
    check: (value) => (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') && set.has(phpString(value)),
    message: (attr) => `The selected ${attr} is invalid.`,
    expected: () => oneOfExpected(allowed),
    describe: (s) => void (s.enum = [...allowed]),
  };
};

/**
 * What the `url` rule says of a value that failed it: Laravel's `max` message past
 * `MAX_URL_LENGTH` (the caller sees which limit it met), else Laravel's `url` message.
 */
export function urlMessage(attr: string, value: unknown): string {
  return typeof value === 'string' && value.trim().length > MAX_URL_LENGTH ? `The ${attr} must not be greater than ${MAX_URL_LENGTH} characters.` : `The ${attr} must be a valid URL.`;
}

/** Lists longer than this are cut in `expected` (the country codes): the OpenAPI document has them all. */
const LISTED_VALUES = 20;

/** "one of: raw, text, markdown". */
export function oneOfExpected(allowed: readonly string[]): string {
  if (allowed.length <= LISTED_VALUES) return `one of: ${allowed.join(', ')}`;
  return `one of ${allowed.length} values: ${allowed.slice(0, LISTED_VALUES).join(', ')}, … (all of them in /openapi.json)`;
}

/** What the `url` rule wants, with the scheme that was sent when it is another one (`file:`). */
export function urlExpected(value: unknown): string {
  if (typeof value === 'string' && value.trim().length > MAX_URL_LENGTH) return `a URL of at most ${MAX_URL_LENGTH} characters`;
  const scheme = typeof value === 'string' ? /^([a-z][a-z0-9+.-]*):/i.exec(value.trim())?.[1]?.toLowerCase() : undefined;
  const wanted = 'an absolute http:// or https:// URL with a host, e.g. https://example.com/page';
  return scheme !== undefined && scheme !== 'http' && scheme !== 'https' ? `${wanted} (${scheme}: URLs are not fetched)` : wanted;
}

/** An absolute http(s) URL with a host (what the service can fetch), at most `MAX_URL_LENGTH` characters. */
export const url = (): Rule<string> => ({
  name: 'url',
  check: (value) => typeof value === 'string' && httpUrlOrNull(value) !== null,
  message: (attr, value) => urlMessage(attr, value),
  expected: urlExpected,
  describe: (s) => Object.assign(s, { type: 'string', format: 'uri', maxLength: MAX_URL_LENGTH }),
});

// Laravel 8's default `email` rule (egulias RFCValidation) accepts local@domain forms broadly;
// this keeps the same spirit: one @, a non-empty local part, a dotted or bracketed domain, no spaces
// or control characters.
const EMAIL = /^[^\s\x00-\x1f\x7f@"(),:;<>[\\\]]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])$/;

/**
 * The `email` rule's test, for the operator's command line too. A lone UTF-16 surrogate is no
 * character at all: such an address could only be stored altered, so it is refused.
 */
export function isValidEmail(value: unknown): boolean {
  return typeof value === 'string' && value.length <= 254 && value.isWellFormed() && EMAIL.test(value);
}

export const email = (): Rule<string> => ({
  name: 'email',
  check: isValidEmail,
  message: (attr) => `The ${attr} must be a valid email address.`,
  describe: (s) => Object.assign(s, { type: 'string', format: 'email' }),
});

/** A rule of the service's own, with its own message. */
export function custom(
  name: string,
  check: (value: unknown, context: RuleContext) => boolean | Promise<boolean>,
  message: string | ((attr: string) => string),
  options: { needsValid?: boolean; implicit?: boolean; describe?: (s: JsonSchema) => void; expected?: string } = {},
): Rule {
  const expected = options.expected;
  return {
    name,
    check,
    message: typeof message === 'string' ? () => message : message,
    needsValid: options.needsValid ?? true,
    implicit: options.implicit,
    describe: options.describe,
    ...(expected !== undefined ? { expected: () => expected } : {}),
  };
}

/**
 * A rule that reads the value as it checks it: the value passes when `parse` answers something
 * (not null), and that answer is what the handler gets (`'r/AskReddit'` → `'AskReddit'`). Like
 * `custom`, it is skipped when an earlier rule of the field failed. `parse` sees the value as
 * sent, so it checks its type itself.
 */
export function parsed<T>(
  name: string,
  parse: (value: unknown) => T | null,
  message: string | ((attr: string) => string),
  options: { describe?: (s: JsonSchema) => void } = {},
): TransformRule<T> {
  return {
    name,
    check: (value) => parse(value) !== null,
    transform: (value) => {
      const result = parse(value);
      if (result === null) throw new Error(`The ${name} rule was asked for the value of input it refuses.`);
      return result;
    },
    message: typeof message === 'string' ? () => message : message,
    needsValid: true,
    describe: options.describe,
  };
}

/**
 * Laravel's `regex` rule ("The :attribute format is invalid."), with a parser for a regular
 * expression: a string `parse` reads (not null) passes, and its reading is the field's value.
 */
export const format = <T>(parse: (value: string) => T | null): TransformRule<T> =>
  parsed('regex', (value) => (typeof value === 'string' ? parse(value) : null), (attr) => `The ${attr} format is invalid.`);

/** The value as an absolute http(s) URL with a host, or null (a rule's check: it never throws). */
export function httpUrlOrNull(value: string): URL | null {
  // Every later step (parsing, resolving, canonical forms, history) is spared a huge value.
  const trimmed = value.trim();
  if (trimmed.length > MAX_URL_LENGTH) return null;
  if (!/^https?:\/\//i.test(trimmed) || /\s/.test(trimmed)) return null;
  try {
    const parsed = new URL(trimmed);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    return parsed.hostname ? parsed : null;
  } catch {
    return null;
  }
}

/** The URL's path ends in one of `extensions` (case-insensitive, e.g. ".PDF" counts). */
export const urlPathEndsWith = (extensions: readonly string[], message: string): Rule =>
  custom(
    'extension',
    (value) => {
      const parsed = typeof value === 'string' ? httpUrlOrNull(value) : null;
      if (!parsed) return false;
      let pathname = parsed.pathname;
      try {
        pathname = decodeURIComponent(pathname);
      } catch {
        // keep the encoded form
      }
      const lower = pathname.toLowerCase();
      return extensions.some((ext) => lower.endsWith(ext));
    },
    message,
  );

/**
 * Refuses URLs whose host is, or resolves to, a non-public address (docs/spec/contract.md §5, §6). It judges
 * any http(s) URL, even one that failed the extension rule, so that both failures are reported;
 * what is not such a URL at all is left to the `url` rule.
 */
export const publicAddress = (): Rule =>
  custom(
    'public_address',
    (value, ctx) => typeof value !== 'string' || httpUrlOrNull(value) === null || ctx.services.isPublicUrl(value.trim()),
    (attr) => `The ${attr} must point to a public address.`,
    { needsValid: false, expected: PUBLIC_ADDRESS_EXPECTED },
  );

/** Where a local page is refused: the setting that lets the operator fetch it (docs/configuration.md). */
export const PUBLIC_ADDRESS_EXPECTED =
  'a host that is, and resolves only to, public addresses; to fetch a local or private host (127.0.0.1, localhost), the operator lists it in OUTBOUND_ALLOW_HOSTS';
