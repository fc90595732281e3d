/**
 * A request schema: fields with their rules, defaults and docs. The same object validates
 * requests (Laravel 8 behaviour and messages) and generates the OpenAPI description.
 */
import {
  attributeName,
  isAbsent,
  type JsonSchema,
  type ProhibitsRule,
  type RequiredRule,
  type RequiredWithoutRule,
  type Rule,
  type RuleContext,
  type ValidationServices,
} from './rules.ts';
import type { FieldErrors } from '../core/errors.ts';

export { attributeName };

export interface Field {
  rules: readonly Rule<any>[];
  /** Applied when the field is absent. */
  default?: unknown;
  description?: string;
  example?: unknown;
  /** Never stored in request history (secrets, raw bodies). */
  secret?: boolean;
  /** Taken from the route's path (`/admin/users/{user}`), not from the body or query. */
  in?: 'path';
}

export type Fields = Record<string, Field>;

export interface Schema<F extends Fields = Fields> {
  fields: F;
  /**
   * Rules across fields (e.g. "only one of these") and inside lists: add messages to `errors`. It
   * runs even when fields failed their own rules (every failing field is reported at once), so it
   * checks the type of each value it reads.
   */
  refine?(input: Record<string, unknown>, errors: FieldErrors): void | Promise<void>;
}

/**
 * Declares a field, keeping its exact type (literal `in: 'path'`, the tuple of its rules) for
 * fields written apart from their schema, e.g. one shared by several rows.
 */
export const field = <const F extends Field>(definition: F): F => definition;

/** Rules that make a field present without a value type of their own. */
type PresenceRule = RequiredRule | RequiredWithoutRule<string>;

/** What a value passing every rule of a field is known to be: the intersection of their types. */
type CheckedValue<R> = [R extends infer Each ? (Each extends PresenceRule ? (value: unknown) => void : Each extends Rule<infer T> ? (value: T) => void : never) : never] extends [
  (value: infer V) => void,
]
  ? V
  : never;

type Transforming = { readonly transform: (value: unknown) => unknown };

/** The result type of a list's last transforming rule as `[T]`, or `[]` when none transforms. */
type LastTransform<R extends readonly unknown[]> = R extends readonly [...infer Init, infer Last]
  ? Last extends { readonly transform: (value: unknown) => infer T }
    ? [T]
    : LastTransform<Init>
  : R extends readonly []
    ? []
    : [Extract<R[number], Transforming>] extends [never]
      ? []
      : [Extract<R[number], Transforming> extends { readonly transform: (value: unknown) => infer T } ? T : never];

/** The handler's value of a field: what its last transforming rule makes of it, else what its rules know it is. */
type FieldValue<F extends Field> = LastTransform<F['rules']> extends [infer T] ? T : CheckedValue<F['rules'][number]>;

/** Present after validation: required, a path parameter, or given a default. */
type IsPresent<F extends Field> = [Extract<F['rules'][number], RequiredRule>] extends [never]
  ? F extends { in: 'path' } | { default: {} | null }
    ? true
    : false
  : true;

/** The field a `required_without` or `prohibits` rule of the field names, or never. */
type RequiredWithoutOf<F extends Field> = F['rules'][number] extends infer R ? (R extends RequiredWithoutRule<infer O> ? O : never) : never;
type ProhibitsOf<F extends Field> = F['rules'][number] extends infer R ? (R extends ProhibitsRule<infer O> ? O : never) : never;

type Given<F extends Fields, K extends keyof F> = { [P in K]: FieldValue<F[P]> };
type NotGiven<K extends PropertyKey> = { [P in K]?: undefined };

/** `required_without:other` on K: K is given, or `other` is. `prohibits:other` on K: not both. */
type CrossFieldRules<F extends Fields, K extends keyof F> = ([RequiredWithoutOf<F[K]>] extends [never]
  ? unknown
  : Given<F, K> | (NotGiven<K> & Given<F, RequiredWithoutOf<F[K]> & keyof F>)) &
  ([ProhibitsOf<F[K]>] extends [never] ? unknown : NotGiven<K> | (Given<F, K> & NotGiven<ProhibitsOf<F[K]>>));

/** Every field's cross-field rules at once (boxed, so that each field's alternatives stay a union). */
type AllCrossFieldRules<F extends Fields> = [keyof F] extends [never]
  ? unknown
  : ({ [K in keyof F]: { rules: CrossFieldRules<F, K> } }[keyof F] extends infer Boxes
      ? (Boxes extends unknown ? (box: Boxes) => void : never) extends (box: infer All extends { rules: unknown }) => void
        ? All['rules']
        : unknown
      : unknown);

/** A member of the input union no request can match: a required field whose type is never. */
type Impossible<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : [T[K]] extends [never] ? K : never }[keyof T];

/** Each possible shape of the input, flattened for readable types. */
type Shapes<T> = T extends unknown ? ([Impossible<T>] extends [never] ? { [K in keyof T]: T[K] } : never) : never;

/**
 * The handler's input, typed from the request schema: `{ query: string; page: number; time_range?: … }`.
 * A field's type is what its rules let through, or what its transforming rule makes of it; fields
 * tied by `required_without` and `prohibits` make a union (`{ url: string; id?: undefined } |
 * { url?: undefined; id: string }`). Reading a field the schema does not declare fails the type check.
 */
export type InputOf<F extends Fields> = Shapes<
  { [K in keyof F as IsPresent<F[K]> extends true ? K : never]: FieldValue<F[K]> } & {
    [K in keyof F as IsPresent<F[K]> extends true ? never : K]?: FieldValue<F[K]>;
  } & AllCrossFieldRules<F>
>;

/** What each failing field should have held, where its messages do not say it (`Rule.expected`). */
export type FieldExpectations = Record<string, string>;

export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; errors: FieldErrors; expected: FieldExpectations };

/**
 * What `validate` answered for this schema, as the schema's rules type it (`InputOf`): defaults
 * filled in, each field's value what its rules let through or its last transforming rule made of
 * it. The pipeline hands a row's functions nothing else, which is what makes this reading true.
 */
export function validatedInput<F extends Fields>(_schema: Schema<F>, value: Record<string, unknown>): InputOf<F> {
  return value as InputOf<F>;
}

/** Refuses every outside look-up: for schemas whose rules never need one. */
const NO_SERVICES: ValidationServices = {
  isPublicUrl: async () => false,
};

export async function validate(schema: Schema, input: Record<string, unknown>, services: ValidationServices = NO_SERVICES): Promise<ValidationResult> {
  const errors: FieldErrors = {};
  const expected: FieldExpectations = {};
  const trimmed = trimStrings(schema, input);
  for (const [name, field] of Object.entries(schema.fields)) {
    const failed = await validateField(name, field, trimmed, services);
    if (failed.messages.length) errors[name] = failed.messages;
    if (failed.expected.length) expected[name] = failed.expected.join('; ');
  }
  // The checks across fields and inside lists run whatever the fields' own rules found, so that
  // every failing field is reported at once. A field its own rules refused keeps their messages
  // alone (a second reading of a value of the wrong type would only repeat them).
  if (schema.refine) {
    const more: FieldErrors = {};
    await schema.refine(trimmed, more);
    for (const [key, messages] of Object.entries(more)) if (errors[key] === undefined) errors[key] = messages;
  }
  if (Object.keys(errors).length) return { ok: false, errors, expected };
  return { ok: true, value: coerce(schema, trimmed) };
}

/** Laravel's TrimStrings middleware runs before validation, so rules see trimmed strings
 *  (" a@example.com " is a valid e-mail). Secret fields are kept as sent, as Laravel keeps passwords. */
function trimStrings(schema: Schema, input: Record<string, unknown>): Record<string, unknown> {
  const out = { ...input };
  for (const [name, field] of Object.entries(schema.fields)) {
    const value = out[name];
    if (typeof value === 'string' && !field.secret) out[name] = value.trim();
  }
  return out;
}

async function validateField(name: string, field: Field, input: Record<string, unknown>, services: ValidationServices): Promise<{ messages: string[]; expected: string[] }> {
  const value = input[name];
  // A blank string or null counts as not sent (Laravel skips blank strings, and null in a
  // `nullable` field): only implicit rules see it, and the default applies.
  const present = !isAbsent(value);
  const context: RuleContext = { input, fieldRules: field.rules, services };
  const attribute = attributeName(name);
  const messages: string[] = [];
  const expected: string[] = [];
  for (const rule of field.rules) {
    if (!present && !rule.implicit) continue;
    if (rule.needsValid && messages.length) continue;
    if (!(await rule.check(value, context))) {
      messages.push(rule.message(attribute, value, context));
      const wanted = rule.expected?.(value, context);
      if (wanted !== undefined && !expected.includes(wanted)) expected.push(wanted);
      if (rule.implicit) break;
    }
  }
  return { messages, expected };
}

/**
 * Valid (trimmed) input → the handler's values: defaults for absent fields, then what each field's
 * last transforming rule makes of the value (integers from numeric strings, booleans from 0/1, a
 * post URL → its id).
 */
function coerce(schema: Schema, input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.fields)) {
    let value = input[name];
    if (isAbsent(value)) value = field.default;
    if (value === undefined) continue;
    const transform = field.rules.findLast((rule) => rule.transform !== undefined)?.transform;
    out[name] = transform && value !== null ? transform(value) : value;
  }
  return out;
}

/** The JSON Schema of the body or query fields (path parameters are described apart). */
export function toJsonSchema(schema: Schema): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const requiredFields: string[] = [];
  for (const [name, field] of Object.entries(schema.fields)) {
    if (field.in === 'path') continue;
    const property: JsonSchema = {};
    for (const rule of field.rules) {
      if (rule.name === 'required') requiredFields.push(name);
      rule.describe?.(property);
    }
    if (field.description) property.description = field.description;
    if (field.default !== undefined) property.default = field.default;
    if (field.example !== undefined) property.example = field.example;
    properties[name] = property;
  }
  return { type: 'object', properties, ...(requiredFields.length ? { required: requiredFields } : {}) };
}

/** The route's path parameters, for the API description. */
export function pathParameters(schema: Schema): Array<{ name: string; schema: JsonSchema; description?: string }> {
  return Object.entries(schema.fields)
    .filter(([, field]) => field.in === 'path')
    .map(([name, field]) => {
      const property: JsonSchema = {};
      for (const rule of field.rules) rule.describe?.(property);
      return { name, schema: property, ...(field.description ? { description: field.description } : {}) };
    });
}
