/**
 * `extract_rules` of `/v1/web`: named CSS-selector rules turned into a JSON object, the way
 * ScrapingBee's rules work. Deterministic: the same HTML and rules always give the same answer.
 *
 * A rule is
 * - a selector string: the first match's text;
 * - `{selector, type: text|html|attr, attr, all}`: its text, inner HTML or an attribute, of the
 *   first match or (`all`) of every match;
 * - `{selector, all, output: {…rules}}`: an object (or, with `all`, a list of objects) built by
 *   running the nested rules inside each match.
 *
 * `validateExtractRules` gives Laravel-style messages keyed by the rule's dotted path
 * (`extract_rules.products.output.price.type`); `extractRules` expects rules that passed it.
 */
import * as cheerio from 'cheerio';
import type { AnyNode } from 'domhandler';
import { isValidSelector } from './selectors.ts';

export const EXTRACT_TYPES = ['text', 'html', 'attr'] as const;
export type ExtractType = (typeof EXTRACT_TYPES)[number];

/** Rules counted at every level together. */
export const MAX_EXTRACT_RULES = 100;
/** `output` nested in `output`: a list of objects holding lists of objects, and no deeper. */
export const MAX_EXTRACT_DEPTH = 3;
/** Values one `all` rule gives at most; the rest of the page's matches are left out. */
export const MAX_EXTRACT_ITEMS = 500;
const MAX_NAME_LENGTH = 100;

export type ExtractRule =
  | string
  | { selector: string; type?: ExtractType; attr?: string; all?: boolean; output?: undefined }
  | { selector: string; all?: boolean; output: ExtractRules };
export type ExtractRules = Record<string, ExtractRule>;

export type ExtractedValue = string | null | ExtractedObject | Array<string | ExtractedObject>;
export interface ExtractedObject {
  [name: string]: ExtractedValue;
}

const RULE_KEYS = new Set(['selector', 'type', 'attr', 'all', 'output']);
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isBooleanLike = (value: unknown) => [true, false, 0, 1, '0', '1'].includes(value as never);
const isTrue = (value: unknown) => value === true || value === 1 || value === '1';

/**
 * Laravel-style messages for every fault in the rules, keyed by the dotted path of the field at
 * fault. An empty object means the rules can run. `field` is the request field's name.
 */
export function validateExtractRules(rules: unknown, field = 'extract_rules'): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (key: string, message: string) => void (errors[key] ??= []).push(message);
  if (!isPlainObject(rules)) {
    add(field, `The ${field} must be an array.`);
    return errors;
  }
  let count = 0;
  const walk = (level: Record<string, unknown>, path: string, depth: number) => {
    const names = Object.keys(level);
    if (names.length === 0) add(path, `The ${path} must have at least 1 items.`);
    for (const name of names) {
      count += 1;
      const at = `${path}.${name}`;
      if (name.trim() === '' || name.length > MAX_NAME_LENGTH) add(at, `The ${at} name must be between 1 and ${MAX_NAME_LENGTH} characters.`);
      const rule = level[name];
      if (typeof rule === 'string') {
        if (!isValidSelector(rule)) add(at, `The ${at} must be a valid CSS selector.`);
        continue;
      }
      if (!isPlainObject(rule)) {
        add(at, `The ${at} must be a CSS selector or an object.`);
        continue;
      }
      for (const key of Object.keys(rule)) if (!RULE_KEYS.has(key)) add(`${at}.${key}`, `The ${at}.${key} field is not allowed.`);
      if (rule.selector === undefined || rule.selector === null || rule.selector === '') add(`${at}.selector`, `The ${at}.selector field is required.`);
      else if (!isValidSelector(rule.selector)) add(`${at}.selector`, `The ${at}.selector must be a valid CSS selector.`);
      if (rule.all !== undefined && !isBooleanLike(rule.all)) add(`${at}.all`, `The ${at}.all field must be true or false.`);
      if (rule.output !== undefined) {
        if (rule.type !== undefined) add(`${at}.type`, `The ${at}.type field is prohibited when ${at}.output is present.`);
        if (rule.attr !== undefined) add(`${at}.attr`, `The ${at}.attr field is prohibited when ${at}.output is present.`);
        if (!isPlainObject(rule.output)) add(`${at}.output`, `The ${at}.output must be an array.`);
        else if (depth >= MAX_EXTRACT_DEPTH) add(`${at}.output`, `The ${at}.output may not nest more than ${MAX_EXTRACT_DEPTH} levels of output.`);
        else walk(rule.output, `${at}.output`, depth + 1);
        continue;
      }
      if (rule.type !== undefined && !(EXTRACT_TYPES as readonly unknown[]).includes(rule.type)) add(`${at}.type`, `The selected ${at}.type is invalid.`);
      if (rule.type === 'attr') {
        if (typeof rule.attr !== 'string' || rule.attr.trim() === '') add(`${at}.attr`, `The ${at}.attr field is required when ${at}.type is attr.`);
      } else if (rule.attr !== undefined) {
        add(`${at}.attr`, `The ${at}.attr field is prohibited unless ${at}.type is attr.`);
      }
    }
  };
  walk(rules, field, 1);
  if (count > MAX_EXTRACT_RULES) add(field, `The ${field} must not have more than ${MAX_EXTRACT_RULES} rules in all.`);
  return errors;
}

/** Text as a reader sees it: whitespace runs collapsed, trimmed. */
const readableText = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Runs rules that passed `validateExtractRules` on a page. A rule that matches nothing gives `null` (or `[]` with `all`). */
export function extractRules(html: string, rules: ExtractRules): ExtractedObject {
  return extractFromDocument(cheerio.load(html), rules);
}

/** `extractRules` on a page already loaded, which it leaves as it is. */
export function extractFromDocument($: cheerio.CheerioAPI, rules: ExtractRules): ExtractedObject {
  const run = (scope: cheerio.Cheerio<AnyNode>, level: ExtractRules): ExtractedObject => {
    const result: ExtractedObject = {};
    for (const [name, rule] of Object.entries(level)) {
      const spec = typeof rule === 'string' ? { selector: rule } : rule;
      const matches = scope.find(spec.selector).toArray();
      const one = (element: AnyNode): string | ExtractedObject | null => {
        const node = $(element);
        if (spec.output !== undefined) return run(node, spec.output);
        if (spec.type === 'html') return node.html() ?? '';
        if (spec.type === 'attr') return node.attr(spec.attr ?? '') ?? null;
        return readableText(node.text());
      };
      if (isTrue(spec.all)) {
        result[name] = matches.slice(0, MAX_EXTRACT_ITEMS).map(one).filter((value): value is string | ExtractedObject => value !== null);
      } else {
        result[name] = matches.length > 0 ? one(matches[0]!) : null;
      }
    }
    return result;
  };
  return run($.root(), rules);
}
