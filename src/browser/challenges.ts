/**
 * What stands between a browser and a page: interstitial challenges (a page that checks the
 * browser and reloads itself, Cloudflare's "Just a moment…" style) and captcha widgets
 * (reCAPTCHA v2/v3, hCaptcha, Cloudflare Turnstile).
 *
 * Interstitials are waited out. Captchas are found here (kind, site key), solved by the caller's
 * solver (the /v1/web solver client speaks the createTask/getTaskResult protocol), and the token
 * is put where the widget would have put it: its response field, its callback, then the form is
 * submitted. Everything runs in the page's main frame through `page.evaluate`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';

export type CaptchaKind = 'recaptcha_v2' | 'recaptcha_v3' | 'hcaptcha' | 'turnstile';

export interface CaptchaWidget {
  kind: CaptchaKind;
  siteKey: string;
  /** The page the widget is on (solvers check the token against it). */
  pageUrl: string;
  /** reCAPTCHA v3 / Turnstile action, when the page declares one. */
  action?: string;
  /** A reCAPTCHA v2 or hCaptcha widget that is invisible (`data-size="invisible"`). */
  invisible?: boolean;
  /** Turnstile's customer data (`data-cdata`), bound into the token like the action. */
  cData?: string;
}

/** Returns the token for a widget; rejects when it cannot be solved. */
export type CaptchaSolverFunction = (widget: CaptchaWidget, signal: AbortSignal) => Promise<string>;

/** A captcha was found and the caller's solver did not solve it. Passed through to the caller as is. */
export class CaptchaUnsolvedError extends Error {
  readonly widget: CaptchaWidget;
  constructor(widget: CaptchaWidget, cause: unknown) {
    super(`The ${widget.kind} captcha could not be solved: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'CaptchaUnsolvedError';
    this.widget = widget;
  }
}

/** How often an interstitial is looked at while it is waited out. */
const INTERSTITIAL_POLL_MS = 250;

/*
 * The scripts below run inside the page (page.evaluate), not in Node: they are kept as source
 * text because the service is compiled without the DOM's types.
 */

/** True while the page is an interstitial: the titles and markers of the common challenge pages. */
const IS_INTERSTITIAL = `(() => {
  const title = (document.title || '').trim();
  if (/^(just a moment|attention required|please wait|checking your browser|one moment|ddos-guard|verifying you are human)/i.test(title)) return true;
  return document.querySelector('#challenge-running, #challenge-form, #cf-challenge-running, .cf-browser-verification, #cf-please-wait, #challenge-stage') !== null;
})()`;

/**
 * Waits while the page is an interstitial, for at most `maxWaitMs`: the challenge reloads or
 * replaces the page itself when it is satisfied. Returns true when the page is no longer one.
 */
export async function waitForInterstitials(page: Page, maxWaitMs: number, signal: AbortSignal): Promise<boolean> {
  const until = Date.now() + maxWaitMs;
  for (;;) {
    if (signal.aborted) throw signal.reason;
    let interstitial: boolean;
    try {
      interstitial = (await page.evaluate(IS_INTERSTITIAL)) === true;
    } catch {
      interstitial = true; // the page is navigating: the challenge is moving on
    }
    if (!interstitial) return true;
    if (Date.now() >= until) return false;
    await sleep(INTERSTITIAL_POLL_MS);
    await page.waitForLoadState('load', { timeout: Math.max(1, until - Date.now()) }).catch(() => undefined);
  }
}

/**
 * The first captcha widget of the main frame as `{ kind, siteKey, action?, invisible? }`, or null.
 * Raw text: the regular expression's backslashes must reach the page as they are.
 */
const FIND_WIDGET = String.raw`(() => {
  const keyFrom = (src, name) => {
    try {
      const url = new URL(src, location.href);
      return url.searchParams.get(name) || new URLSearchParams(url.hash.slice(1)).get(name);
    } catch {
      return null;
    }
  };
  const hcaptcha = document.querySelector('.h-captcha[data-sitekey]');
  if (hcaptcha) return { kind: 'hcaptcha', siteKey: hcaptcha.dataset.sitekey, invisible: hcaptcha.dataset.size === 'invisible' };
  for (const frame of document.querySelectorAll('iframe[src*="hcaptcha.com"]')) {
    const key = keyFrom(frame.src, 'sitekey');
    if (key) return { kind: 'hcaptcha', siteKey: key };
  }
  const turnstile = document.querySelector('.cf-turnstile[data-sitekey]');
  if (turnstile) return { kind: 'turnstile', siteKey: turnstile.dataset.sitekey, action: turnstile.dataset.action, cData: turnstile.dataset.cdata };
  const recaptcha = document.querySelector('.g-recaptcha[data-sitekey]');
  // v3 bound to a button carries data-action; a v2 widget has none.
  if (recaptcha && recaptcha.dataset.action) return { kind: 'recaptcha_v3', siteKey: recaptcha.dataset.sitekey, action: recaptcha.dataset.action };
  if (recaptcha) return { kind: 'recaptcha_v2', siteKey: recaptcha.dataset.sitekey, invisible: recaptcha.dataset.size === 'invisible' };
  for (const frame of document.querySelectorAll('iframe[src*="/recaptcha/api2/anchor"], iframe[src*="/recaptcha/enterprise/anchor"]')) {
    const key = keyFrom(frame.src, 'k');
    if (key) return { kind: 'recaptcha_v2', siteKey: key, invisible: keyFrom(frame.src, 'size') === 'invisible' };
  }
  // A v3 token is bound to the action the page names in grecaptcha.execute(key, { action }) and
  // sites check it, so the action is read from the page's inline scripts. A v2 execute takes no
  // key (or a widget number), so a quoted key there also marks a v3 page whose api.js is not in the DOM.
  const executeCalls = [];
  for (const script of document.querySelectorAll('script:not([src])')) {
    const pattern = /grecaptcha(?:\.enterprise)?\.execute\(\s*(?:(['"])([\w-]+)\1|[\w$.]+)\s*(?:,\s*\{[^}]*?\baction\s*:\s*(['"])([^'"]+)\3)?/g;
    for (const match of (script.textContent || '').matchAll(pattern)) executeCalls.push({ key: match[2], action: match[4] });
  }
  const actionFor = (key) => (executeCalls.find((call) => call.key === key && call.action) || executeCalls.find((call) => call.key === undefined && call.action) || {}).action;
  for (const script of document.querySelectorAll('script[src*="/recaptcha/api.js"], script[src*="/recaptcha/enterprise.js"]')) {
    const key = keyFrom(script.src, 'render');
    if (key && key !== 'explicit' && key !== 'onload') return { kind: 'recaptcha_v3', siteKey: key, action: actionFor(key) };
  }
  const literal = executeCalls.find((call) => call.key);
  if (literal) return { kind: 'recaptcha_v3', siteKey: literal.key, action: actionFor(literal.key) };
  return null;
})()`;

const CAPTCHA_KINDS = new Set<string>(['recaptcha_v2', 'recaptcha_v3', 'hcaptcha', 'turnstile']);

export async function findCaptcha(page: Page): Promise<CaptchaWidget | undefined> {
  const found = (await page.evaluate(FIND_WIDGET).catch(() => null)) as Record<string, unknown> | null;
  if (found === null || !CAPTCHA_KINDS.has(String(found.kind)) || typeof found.siteKey !== 'string' || found.siteKey === '') return undefined;
  return {
    kind: found.kind as CaptchaKind,
    siteKey: found.siteKey,
    pageUrl: page.url(),
    ...(typeof found.action === 'string' && found.action !== '' ? { action: found.action } : {}),
    ...(found.invisible === true ? { invisible: true } : {}),
    ...(typeof found.cData === 'string' && found.cData !== '' ? { cData: found.cData } : {}),
  };
}

/**
 * Puts the token where the widget would: the response fields (created when missing), the
 * `data-callback` function, reCAPTCHA v3's `execute`, then submits the widget's form when no
 * callback took over. Called with `{ kind, token }`.
 */
const INJECT_TOKEN = `({ kind, token }) => {
  const fieldNames = kind === 'hcaptcha' ? ['h-captcha-response', 'g-recaptcha-response'] : kind === 'turnstile' ? ['cf-turnstile-response'] : ['g-recaptcha-response'];
  const selector = kind === 'hcaptcha' ? '.h-captcha' : kind === 'turnstile' ? '.cf-turnstile' : '.g-recaptcha';
  const widget = document.querySelector(selector);
  const firstField = document.querySelector('[name="' + fieldNames[0] + '"]');
  const form = (widget && widget.closest('form')) || (firstField && firstField.closest('form')) || null;
  for (const name of fieldNames) {
    let fields = [...document.querySelectorAll('[name="' + name + '"]')];
    if (fields.length === 0 && form !== null) {
      const created = document.createElement('textarea');
      created.name = name;
      created.style.display = 'none';
      form.appendChild(created);
      fields = [created];
    }
    for (const field of fields) field.value = token;
  }
  if (kind === 'recaptcha_v3') {
    // Pages ask for a v3 token with grecaptcha.execute(): answer with the solved one.
    window.grecaptcha = window.grecaptcha || {};
    window.grecaptcha.ready = (callback) => callback();
    window.grecaptcha.execute = () => Promise.resolve(token);
  }
  const callbackName = widget && widget.dataset.callback;
  if (callbackName && typeof window[callbackName] === 'function') {
    window[callbackName](token);
    return;
  }
  if (form === null) return;
  // v3 pages usually ask for the token in their own submit handler (execute answers it now):
  // submit as the button would, handlers and all, unless validation would stop that.
  if (kind === 'recaptcha_v3' && form.checkValidity()) {
    HTMLFormElement.prototype.requestSubmit.call(form);
    return;
  }
  // The prototype's submit: a field named "submit" would shadow the form's own method.
  HTMLFormElement.prototype.submit.call(form);
}`;

/** How long a submitted captcha may take to start loading the next page before the page is taken as it is. */
const SUBMIT_NAVIGATION_GRACE_MS = 3_000;

/** Solves the page's captcha, if it has one, and waits for what the submission loads. */
export async function solveCaptcha(page: Page, solve: CaptchaSolverFunction, deadline: number, signal: AbortSignal): Promise<CaptchaWidget | undefined> {
  const widget = await findCaptcha(page);
  if (widget === undefined) return undefined;
  let token: string;
  try {
    token = await solve(widget, signal);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new CaptchaUnsolvedError(widget, error);
  }
  if (signal.aborted) throw signal.reason;
  // A form submission loads the next page; a callback may only update this one. Wait for a
  // navigation for a moment, then for its load when one started; the caller then lets the network settle.
  const navigation = page.waitForNavigation({ timeout: Math.max(1, Math.min(SUBMIT_NAVIGATION_GRACE_MS, deadline - Date.now())), waitUntil: 'commit' });
  navigation.catch(() => undefined);
  await page.evaluate(`(${INJECT_TOKEN})(${JSON.stringify({ kind: widget.kind, token })})`).catch(() => undefined); // a submit tears the context down
  const started = await navigation.then(() => true, () => false);
  if (started) await page.waitForLoadState('load', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
  return widget;
}
