/**
 * Captcha solving through the createTask / getTaskResult protocol that 2Captcha, Anti-Captcha and
 * CapSolver share (docs/web.md): POST `<url>/createTask` with `{clientKey, task}` answers
 * `{errorId: 0, taskId}`; POST `<url>/getTaskResult` with `{clientKey, taskId}` answers
 * `{status: "processing"}` until `{status: "ready", solution: {gRecaptchaResponse | token}}`.
 * A non-zero `errorId` is a failure (`errorCode`, `errorDescription`). Calls go through the
 * upstream runtime like every other upstream call of the service (upstream `captcha-solver`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CaptchaKind, CaptchaWidget } from '../../browser/challenges.ts';
import type { UpstreamRuntime } from '../kit/runtime.ts';
import type { Adapter, CallContext, ParseOutcome, UpstreamResponse } from '../kit/types.ts';

/** Solves one widget for a request: its signal, logger and id come with it. */
export type CaptchaSolver = (widget: CaptchaWidget, context: CallContext & { signal: AbortSignal }) => Promise<string>;

/** Task type names: 2Captcha and Anti-Captcha use one set, CapSolver its own. */
export const SOLVER_FLAVORS = ['anticaptcha', 'capsolver'] as const;
export type SolverFlavor = (typeof SOLVER_FLAVORS)[number];

const TASK_TYPES: Record<SolverFlavor, Record<CaptchaKind, string>> = {
  anticaptcha: {
    recaptcha_v2: 'RecaptchaV2TaskProxyless',
    recaptcha_v3: 'RecaptchaV3TaskProxyless',
    hcaptcha: 'HCaptchaTaskProxyless',
    turnstile: 'TurnstileTaskProxyless',
  },
  capsolver: {
    recaptcha_v2: 'ReCaptchaV2TaskProxyLess',
    recaptcha_v3: 'ReCaptchaV3TaskProxyLess',
    hcaptcha: 'HCaptchaTaskProxyLess',
    turnstile: 'AntiTurnstileTaskProxyLess',
  },
};

export interface CaptchaSolverSettings {
  /** Base URL of the service (CAPTCHA_SOLVER_URL), e.g. https://api.2captcha.com. */
  url: string;
  /** The account key (CAPTCHA_SOLVER_KEY), sent as `clientKey`. */
  key: string;
  flavor: SolverFlavor;
  /** Between two getTaskResult calls (CAPTCHA_SOLVER_POLL_MS). */
  pollIntervalMs: number;
  /** For the whole solve, creation to token (CAPTCHA_SOLVER_TIMEOUT_MS). */
  timeoutMs: number;
}

export class CaptchaSolverError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CaptchaSolverError';
  }
}

/** Answers from the solver are small JSON objects; anything bigger is not one. */
const MAX_SOLVER_ANSWER_BYTES = 256 * 1024;
/** One call to the solver: creation or one poll. */
const CALL_TIMEOUT_MS = 15_000;
/** reCAPTCHA v3 needs a minimum score (Anti-Captcha and 2Captcha take 0.3, 0.7 or 0.9); 0.7 is what most sites accept. */
const V3_MIN_SCORE = 0.7;
/** The action a v3 token is asked for when the page names none (the services' own default). */
const V3_DEFAULT_ACTION = 'verify';

/** The task object for a widget, in the flavour's names. */
export function captchaTask(widget: CaptchaWidget, flavor: SolverFlavor): Record<string, unknown> {
  const task: Record<string, unknown> = { type: TASK_TYPES[flavor][widget.kind], websiteURL: widget.pageUrl, websiteKey: widget.siteKey };
  if (widget.kind === 'recaptcha_v3') {
    task.pageAction = widget.action ?? V3_DEFAULT_ACTION;
    // CapSolver's v3 task has no minimum score field.
    if (flavor === 'anticaptcha') task.minScore = V3_MIN_SCORE;
  }
  if ((widget.kind === 'recaptcha_v2' || widget.kind === 'hcaptcha') && widget.invisible) task.isInvisible = true;
  if (widget.kind === 'turnstile' && (widget.action !== undefined || widget.cData !== undefined)) {
    // Cloudflare binds the action and the customer data into the token, and sites check both.
    // CapSolver takes them inside `metadata`; Anti-Captcha and 2Captcha as fields of the task,
    // the customer data under three names: `cData` and, in its older API, `turnstileCData`
    // (Anti-Captcha), `data` (2Captcha). Each service ignores the names it does not use.
    if (flavor === 'capsolver') {
      task.metadata = { ...(widget.action !== undefined ? { action: widget.action } : {}), ...(widget.cData !== undefined ? { cdata: widget.cData } : {}) };
    } else {
      if (widget.action !== undefined) task.action = widget.action;
      if (widget.cData !== undefined) Object.assign(task, { cData: widget.cData, turnstileCData: widget.cData, data: widget.cData });
    }
  }
  return task;
}

type SolverMethod = 'createTask' | 'getTaskResult' | 'getBalance';

/**
 * The service's answer, read: a JSON object is an answer (its `errorId` is the solver's business,
 * told by the caller); a non-2xx status without one is the service refusing us; anything else is
 * not the protocol.
 */
export function parseSolverAnswer(response: UpstreamResponse): ParseOutcome<Record<string, unknown>> {
  let answer: unknown;
  try {
    answer = JSON.parse(response.body);
  } catch {
    return response.status >= 200 && response.status < 300 ? { kind: 'changed', reason: 'an answer that is not JSON' } : { kind: 'blocked', reason: `answered ${response.status}` };
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { kind: 'changed', reason: 'an answer that is not a JSON object' };
  const fields = answer as Record<string, unknown>;
  if ((response.status < 200 || response.status >= 300) && (fields.errorId === undefined || fields.errorId === 0)) return { kind: 'blocked', reason: `answered ${response.status}` };
  return { kind: 'ok', value: fields };
}

/** One method of the createTask protocol as an adapter (POST `<url>/<method>` with the key). */
export function solverAdapter(method: SolverMethod): Adapter<{ key: string; payload: Record<string, unknown> }, Record<string, unknown>> {
  return {
    upstream: 'captcha-solver',
    operation: method,
    // Asking for a result or the balance twice changes nothing; creating a task twice pays twice.
    idempotent: method !== 'createTask',
    buildRequest: ({ key, payload }, { baseUrl }) => ({
      url: new URL(method, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).href,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ clientKey: key, ...payload }),
    }),
    parse: (response) => parseSolverAnswer(response),
  };
}

const CREATE_TASK = solverAdapter('createTask');
const GET_TASK_RESULT = solverAdapter('getTaskResult');

/**
 * The balance, for `gleaner upstreams probe`: here an `errorId` is the answer that matters (a key
 * the service refuses, an account with no money), so it is `blocked`, not `ok`.
 */
export const SOLVER_BALANCE: Adapter<{ key: string; payload: Record<string, unknown> }, Record<string, unknown>> = {
  ...solverAdapter('getBalance'),
  parse: (response) => {
    const outcome = parseSolverAnswer(response);
    if (outcome.kind === 'ok' && outcome.value.errorId !== undefined && outcome.value.errorId !== 0) {
      return { kind: 'blocked', reason: `getBalance refused: ${String(outcome.value.errorCode ?? outcome.value.errorId)}` };
    }
    return outcome;
  },
};

/** A solver for the browser pool's pages, bound to the settings and the runtime. */
export function createCaptchaSolver(settings: CaptchaSolverSettings, runtime: UpstreamRuntime): CaptchaSolver {
  const upstream = runtime.upstream({ timeoutMs: CALL_TIMEOUT_MS, baseUrl: settings.url, maxBytes: MAX_SOLVER_ANSWER_BYTES, maxRedirects: 0 });

  async function call(adapter: Adapter<{ key: string; payload: Record<string, unknown> }, Record<string, unknown>>, payload: Record<string, unknown>, deadline: number, context: CallContext): Promise<Record<string, unknown>> {
    const outcome = await upstream.call(adapter, { key: settings.key, payload }, context, { timeoutMs: Math.max(1, Math.min(CALL_TIMEOUT_MS, deadline - Date.now())) });
    if (outcome.kind !== 'ok') throw new CaptchaSolverError(`${adapter.operation} failed: ${outcome.kind}${'reason' in outcome && outcome.reason ? ` (${outcome.reason})` : ''}`);
    const fields = outcome.value;
    if (fields.errorId !== undefined && fields.errorId !== 0) {
      throw new CaptchaSolverError(`${adapter.operation} failed: ${String(fields.errorCode ?? fields.errorId)} ${String(fields.errorDescription ?? '')}`.trim());
    }
    return fields;
  }

  return async function solve(widget, context) {
    const { signal } = context;
    const deadline = Date.now() + settings.timeoutMs;
    const created = await call(CREATE_TASK, { task: captchaTask(widget, settings.flavor) }, deadline, context);
    const taskId = created.taskId;
    if (typeof taskId !== 'string' && typeof taskId !== 'number') throw new CaptchaSolverError('createTask answered without a taskId');
    for (;;) {
      const wait = Math.min(settings.pollIntervalMs, deadline - Date.now());
      if (wait <= 0) throw new CaptchaSolverError(`No solution within ${settings.timeoutMs} ms`);
      await sleep(wait, undefined, { signal });
      if (Date.now() >= deadline) throw new CaptchaSolverError(`No solution within ${settings.timeoutMs} ms`);
      const result = await call(GET_TASK_RESULT, { taskId }, deadline, context);
      if (result.status === 'processing' || result.status === 'idle') continue;
      if (result.status !== 'ready') throw new CaptchaSolverError(`getTaskResult answered the status "${String(result.status)}"`);
      const solution = (result.solution ?? {}) as Record<string, unknown>;
      const token = solution.gRecaptchaResponse ?? solution.token ?? solution.text;
      if (typeof token !== 'string' || token === '') throw new CaptchaSolverError('The solution carries no token');
      return token;
    }
  };
}
