/**
 * What a caller asks the rendered page to do before it is read (`/v1/web` with `wait_for`,
 * `actions`, `screenshot`): each step bounded by its own limit and by the request's deadline.
 * A step that cannot be done fails the render with `RenderStepError`, which names the step, so
 * the endpoint can tell the caller which part of their request the page did not allow.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';

export const ACTION_TYPES = ['click', 'type', 'press', 'scroll', 'wait'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export interface PageAction {
  type: ActionType;
  /** `click` and `type`: the element; `scroll`: the element to bring into view (else one screen down); `wait`: an element to wait for. */
  selector?: string;
  /** `type`: the text typed. */
  text?: string;
  /** `press`: a key name (`Enter`, `PageDown`, `Control+A`). */
  key?: string;
  /** `wait`: milliseconds to pause (with no selector); the step's own limit otherwise. */
  milliseconds?: number;
}

/** The longest one step may take, whatever it asks for. */
export const MAX_STEP_MS = 10_000;
/** Part of the deadline kept for reading the page (and the screenshot) after the steps. */
export const STEPS_RESERVE_MS = 2_000;
/** Tallest full-page screenshot: the rest of a longer page is cut off. */
export const MAX_SCREENSHOT_HEIGHT = 10_000;

export interface ScreenshotOptions {
  fullPage: boolean;
  type: 'png' | 'jpeg';
  /** Receives the image once taken (the runtime carries the page's HTML only). */
  receive: (image: Buffer) => void;
}

/** A step the page did not allow: `step` is `wait_for`, `actions.N` or `screenshot`. */
export class RenderStepError extends Error {
  readonly step: string;
  constructor(step: string, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'RenderStepError';
    this.step = step;
  }
}

const stepBudget = (deadline: number, limit = MAX_STEP_MS) => Math.max(1, Math.min(limit, deadline - STEPS_RESERVE_MS - Date.now()));

const describe = (error: unknown) => (error instanceof Error ? error.message.split('\n')[0]! : String(error));

/** `wait_for`: a selector to appear, or a pause, within the deadline. */
export async function waitForCondition(page: Page, waitFor: string | number, deadline: number, signal: AbortSignal): Promise<void> {
  if (typeof waitFor === 'number') {
    await sleep(stepBudget(deadline, waitFor), undefined, { signal });
    return;
  }
  const timeout = stepBudget(deadline, Number.POSITIVE_INFINITY);
  await page.waitForSelector(waitFor, { state: 'visible', timeout }).catch((error: unknown) => {
    throw new RenderStepError('wait_for', `The wait_for selector "${waitFor}" did not appear within ${timeout} ms.`, error);
  });
}

/** The caller's actions, in order; the first that fails stops the render. */
export async function runActions(page: Page, actions: readonly PageAction[], deadline: number, signal: AbortSignal): Promise<void> {
  for (const [index, action] of actions.entries()) {
    if (signal.aborted) throw signal.reason;
    const timeout = stepBudget(deadline);
    try {
      await runAction(page, action, timeout, signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new RenderStepError(`actions.${index}`, `The actions.${index} step (${action.type}) failed: ${describe(error)}`, error);
    }
  }
}

async function runAction(page: Page, action: PageAction, timeout: number, signal: AbortSignal): Promise<void> {
  switch (action.type) {
    case 'click':
      await page.click(action.selector!, { timeout });
      // A click often starts a fetch or a navigation: let it land before the next step.
      await page.waitForLoadState('load', { timeout });
      await page.waitForLoadState('networkidle', { timeout: Math.min(timeout, 1_000) }).catch(() => undefined);
      return;
    case 'type':
      await page.fill(action.selector!, action.text ?? '', { timeout });
      return;
    case 'press':
      await page.keyboard.press(action.key!);
      return;
    case 'scroll':
      if (action.selector !== undefined) await page.locator(action.selector).first().scrollIntoViewIfNeeded({ timeout });
      else await page.mouse.wheel(0, page.viewportSize()?.height ?? 768);
      return;
    case 'wait':
      if (action.selector !== undefined) await page.waitForSelector(action.selector, { state: 'visible', timeout: Math.min(timeout, action.milliseconds ?? timeout) });
      else await sleep(Math.min(timeout, action.milliseconds ?? 0), undefined, { signal });
      return;
  }
}

/** The screenshot: the viewport, or the whole page up to MAX_SCREENSHOT_HEIGHT pixels. */
export async function takeScreenshot(page: Page, options: ScreenshotOptions, deadline: number): Promise<void> {
  const timeout = Math.max(1, deadline - Date.now());
  try {
    let clip: { x: number; y: number; width: number; height: number } | undefined;
    if (options.fullPage) {
      // Runs in the page (source text: the service is compiled without the DOM's types).
      const size = (await page.evaluate('[document.documentElement.scrollWidth, document.documentElement.scrollHeight]')) as [number, number];
      const width = Math.max(1, Math.min(size[0], page.viewportSize()?.width ?? size[0]));
      clip = { x: 0, y: 0, width, height: Math.max(1, Math.min(size[1], MAX_SCREENSHOT_HEIGHT)) };
    }
    const image = await page.screenshot({ type: options.type, fullPage: options.fullPage, clip, timeout, ...(options.type === 'jpeg' ? { quality: 80 } : {}) });
    options.receive(image);
  } catch (error) {
    throw new RenderStepError('screenshot', `The screenshot could not be taken: ${describe(error)}`, error);
  }
}
