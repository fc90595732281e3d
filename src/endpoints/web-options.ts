/**
 * The scraping options of POST /v1/web beyond the fetch itself (docs/web.md, "Options"): which
 * parts of the page to keep (`include_selectors`, `exclude_selectors`) and what to read out of it
 * (`extract_rules`). Field rules check the shape; `refineWebOptions` names each bad selector or
 * rule by its dotted path, as Laravel does for nested input.
 */
import { custom, isAbsent, parsed } from '../validation/rules.ts';
import type { FieldErrors } from '../core/errors.ts';
import { isValidSelector, MAX_SELECTOR_LENGTH, MAX_SELECTORS } from '../adapters/web/selectors.ts';
import { ACTION_TYPES, MAX_SCREENSHOT_HEIGHT, MAX_STEP_MS, type PageAction } from '../browser/steps.ts';
import { MAX_EXTRACT_DEPTH, MAX_EXTRACT_ITEMS, MAX_EXTRACT_RULES, validateExtractRules, type ExtractRules } from '../adapters/web/extract-rules.ts';

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A list of CSS selectors; each one is checked in `refineWebOptions`, which names the bad one. */
const selectorList = () => [
  parsed('array', (value) => (Array.isArray(value) ? (value as string[]) : null), (attr) => `The ${attr} must be an array.`, {
    describe: (s) => void Object.assign(s, { type: 'array', items: { type: 'string', maxLength: MAX_SELECTOR_LENGTH }, maxItems: MAX_SELECTORS }),
  }),
  custom('max', (value) => Array.isArray(value) && value.length <= MAX_SELECTORS, (attr) => `The ${attr} must not have more than ${MAX_SELECTORS} items.`),
];

const RULE_SCHEMA = {
  oneOf: [
    { type: 'string', description: 'A CSS selector: the text of its first match.' },
    {
      type: 'object',
      properties: {
        selector: { type: 'string' },
        type: { type: 'string', enum: ['text', 'html', 'attr'], default: 'text' },
        attr: { type: 'string', description: 'The attribute to read, with `type: attr`.' },
        all: { type: 'boolean', default: false, description: 'Every match, as a list, instead of the first.' },
        output: { type: 'object', additionalProperties: true, description: 'Nested rules run inside each match: an object, or a list of objects with `all`.' },
      },
      required: ['selector'],
    },
  ],
};

/** Actions per request. */
export const MAX_ACTIONS = 20;

export const WEB_OPTION_MESSAGES = {
  waitFor: `The wait for must be a CSS selector or a number of milliseconds between 0 and ${MAX_STEP_MS}.`,
  screenshot: 'The screenshot must be true, or an object with full_page (true or false) and type (png or jpeg).',
  needsBrowser: (attr: string) => `The ${attr} option needs the browser: set bypass_captcha to true.`,
} as const;

/** `wait_for`: a selector to wait for, or a pause in milliseconds. */
function readWaitFor(value: unknown): string | number | null {
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))) {
    const ms = Number(value);
    return Number.isInteger(ms) && ms >= 0 && ms <= MAX_STEP_MS ? ms : null;
  }
  return isValidSelector(value) ? value : null;
}

export interface ScreenshotRequest {
  fullPage: boolean;
  type: 'png' | 'jpeg';
}

/** `screenshot`: `true` (the viewport, PNG), `false` (none), or `{full_page, type}`. */
function readScreenshot(value: unknown): ScreenshotRequest | false | null {
  if (value === false || value === 0 || value === '0') return false;
  if (value === true || value === 1 || value === '1') return { fullPage: false, type: 'png' };
  if (!isPlainObject(value) || Object.keys(value).some((key) => key !== 'full_page' && key !== 'type')) return null;
  const fullPage = value.full_page ?? false;
  const type = value.type ?? 'png';
  if (![true, false, 0, 1, '0', '1'].includes(fullPage as never) || (type !== 'png' && type !== 'jpeg')) return null;
  return { fullPage: fullPage === true || fullPage === 1 || fullPage === '1', type };
}

export const WEB_OPTION_FIELDS = {
  include_selectors: {
    rules: selectorList(),
    description: `CSS selectors (at most ${MAX_SELECTORS}): only the matching elements of an HTML page are kept, in page order, before conversion; the head is kept, so metadata still comes through.`,
    example: ['article', '.price'],
  },
  exclude_selectors: {
    rules: selectorList(),
    description: `CSS selectors (at most ${MAX_SELECTORS}): the matching elements of an HTML page's body are removed before conversion (after include_selectors).`,
    example: ['nav', '.cookie-banner'],
  },
  extract_rules: {
    rules: [
      parsed('array', (value) => (isPlainObject(value) ? (value as ExtractRules) : null), (attr) => `The ${attr} must be an array.`, {
        describe: (s) => void Object.assign(s, { type: 'object', additionalProperties: RULE_SCHEMA }),
      }),
    ],
    description: `Named CSS rules read from the whole HTML page into \`extracted\`: a selector string (its first match's text), \`{selector, type: text|html|attr, attr, all}\`, or \`{selector, all, output: {…rules}}\` for objects and lists of objects. At most ${MAX_EXTRACT_RULES} rules in all, ${MAX_EXTRACT_DEPTH} levels of output, ${MAX_EXTRACT_ITEMS} items per list. No match is \`null\` (\`[]\` with all).`,
    example: { title: 'h1', price: { selector: '.price', type: 'text' }, links: { selector: 'a', type: 'attr', attr: 'href', all: true } },
  },
  wait_for: {
    rules: [
      parsed('wait_for', readWaitFor, WEB_OPTION_MESSAGES.waitFor, {
        describe: (s) => void Object.assign(s, { oneOf: [{ type: 'string' }, { type: 'integer', minimum: 0, maximum: MAX_STEP_MS }] }),
      }),
    ],
    description: `Browser only (bypass_captcha): before the page is read, wait until this CSS selector is visible, or pause this many milliseconds (at most ${MAX_STEP_MS}), within the request's deadline. A selector that never shows is a free 422 on wait_for.`,
    example: '#results',
  },
  actions: {
    rules: [
      parsed('array', (value) => (Array.isArray(value) ? (value as PageAction[]) : null), (attr) => `The ${attr} must be an array.`, {
        describe: (s) =>
          void Object.assign(s, {
            type: 'array',
            maxItems: MAX_ACTIONS,
            items: {
              type: 'object',
              required: ['type'],
              properties: {
                type: { type: 'string', enum: [...ACTION_TYPES] },
                selector: { type: 'string' },
                text: { type: 'string' },
                key: { type: 'string' },
                milliseconds: { type: 'integer', minimum: 0, maximum: MAX_STEP_MS },
              },
            },
          }),
      }),
      custom('max', (value) => Array.isArray(value) && value.length <= MAX_ACTIONS, (attr) => `The ${attr} must not have more than ${MAX_ACTIONS} items.`),
    ],
    description: `Browser only (bypass_captcha): up to ${MAX_ACTIONS} steps run in order once the page has loaded: \`click\` (selector), \`type\` (selector, text), \`press\` (key), \`scroll\` (selector, or one screen down), \`wait\` (milliseconds, or a selector). Each step has ${MAX_STEP_MS / 1000} s at most; a step that fails is a free 422 on \`actions.N\`.`,
    example: [{ type: 'click', selector: 'button.load-more' }, { type: 'wait', milliseconds: 500 }],
  },
  screenshot: {
    rules: [
      parsed('screenshot', readScreenshot, WEB_OPTION_MESSAGES.screenshot, {
        describe: (s) =>
          void Object.assign(s, {
            oneOf: [
              { type: 'boolean' },
              { type: 'object', properties: { full_page: { type: 'boolean', default: false }, type: { type: 'string', enum: ['png', 'jpeg'], default: 'png' } } },
            ],
          }),
      }),
    ],
    description: `Browser only (bypass_captcha): \`true\` or \`{full_page, type: png|jpeg}\`; the image comes back base64 in \`screenshot\`. A full page is cut at ${MAX_SCREENSHOT_HEIGHT} pixels high. Adds the web_screenshot price.`,
    example: { full_page: true, type: 'png' },
  },
} as const;

const BROWSER_ONLY = ['wait_for', 'actions', 'screenshot'] as const;
const isTrue = (value: unknown) => value === true || value === 1 || value === '1';

/** Laravel-style messages for one action, keyed `actions.N.field`. */
function checkAction(action: unknown, at: string, add: (key: string, message: string) => void): void {
  if (!isPlainObject(action)) return add(at, `The ${at} must be an array.`);
  for (const key of Object.keys(action)) {
    if (!['type', 'selector', 'text', 'key', 'milliseconds'].includes(key)) add(`${at}.${key}`, `The ${at}.${key} field is not allowed.`);
  }
  const type = action.type;
  if (isAbsent(type)) return add(`${at}.type`, `The ${at}.type field is required.`);
  if (!(ACTION_TYPES as readonly unknown[]).includes(type)) return add(`${at}.type`, `The selected ${at}.type is invalid.`);
  if (action.selector !== undefined && !isValidSelector(action.selector)) add(`${at}.selector`, `The ${at}.selector must be a valid CSS selector.`);
  if ((type === 'click' || type === 'type') && isAbsent(action.selector)) add(`${at}.selector`, `The ${at}.selector field is required when ${at}.type is ${type}.`);
  if (type === 'type' && typeof action.text !== 'string') add(`${at}.text`, `The ${at}.text field is required when ${at}.type is type.`);
  if (type === 'press' && (typeof action.key !== 'string' || action.key.trim() === '')) add(`${at}.key`, `The ${at}.key field is required when ${at}.type is press.`);
  if (action.milliseconds !== undefined) {
    const ms = action.milliseconds;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_STEP_MS) add(`${at}.milliseconds`, `The ${at}.milliseconds must be an integer between 0 and ${MAX_STEP_MS}.`);
  }
  if (type === 'wait' && isAbsent(action.milliseconds) && isAbsent(action.selector)) add(`${at}.milliseconds`, `The ${at}.milliseconds field is required when ${at}.selector is not present.`);
}

/** The per-item checks of the options, keyed by dotted path (`include_selectors.1`, `extract_rules.price.type`). */
export function refineWebOptions(input: Record<string, unknown>, errors: FieldErrors): void {
  for (const field of ['include_selectors', 'exclude_selectors'] as const) {
    const list = input[field];
    if (!Array.isArray(list)) continue;
    list.forEach((selector: unknown, index) => {
      if (!isValidSelector(selector)) {
        const shown = typeof selector === 'string' ? ` "${selector.slice(0, 100)}"` : '';
        errors[`${field}.${index}`] = [`The ${field}.${index} must be a valid CSS selector${shown ? `:${shown}` : ''}.`];
      }
    });
  }
  if (!isAbsent(input.extract_rules)) Object.assign(errors, validateExtractRules(input.extract_rules));
  if (Array.isArray(input.actions)) {
    const add = (key: string, message: string) => void (errors[key] ??= []).push(message);
    input.actions.forEach((action: unknown, index) => checkAction(action, `actions.${index}`, add));
  }
  // Browser steps without the browser: refused rather than silently switched to the browser's price.
  if (!isTrue(input.bypass_captcha)) {
    for (const field of BROWSER_ONLY) {
      const value = input[field];
      const off = isAbsent(value) || (field === 'screenshot' && readScreenshot(value) === false) || (field === 'actions' && Array.isArray(value) && value.length === 0);
      if (!off) errors[field] = [WEB_OPTION_MESSAGES.needsBrowser(field.replace(/_/g, ' '))];
    }
  }
}
