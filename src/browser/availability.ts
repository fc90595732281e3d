/**
 * Whether the browser pool can run here, and how: Chromium installed, started for real, with its
 * sandbox where the machine allows it (sandbox.ts decides; this file runs the probe launches).
 * The service asks once: the search chain leaves out the engines that need a browser, and
 * `/v1/web` browser mode answers "not configured", when the answer is no.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { DEFAULT_CHROMIUM_PATH, launchBrowser } from './launch.ts';
import {
  currentUid,
  decideSandbox,
  explainSandboxFailure,
  isSandboxFailure,
  needsSandboxProbe,
  readUserNamespaceFacts,
  type BrowserSandboxMode,
  type SandboxProbe,
} from './sandbox.ts';

/** How the pool runs Chromium here, or why it does not. */
export type BrowserStatus =
  | { available: true; sandboxed: true }
  | { available: true; sandboxed: false; reason: string }
  | { available: false; reason: string };

const statuses = new Map<string, Promise<BrowserStatus>>();
/** Per path: whether Chromium starts without its sandbox (undefined) or what went wrong. */
const unsandboxedStarts = new Map<string, Promise<string | undefined>>();

/**
 * How the pool may run `executablePath` under the BROWSER_SANDBOX `mode`: sandboxed, unsandboxed
 * (with the reason), or not at all (with the reason: no Chromium, running as root, the sandbox
 * required and impossible). Found by launching Chromium, with its sandbox first where that may
 * work; cached per path and mode.
 */
export function browserStatus(executablePath: string, mode: BrowserSandboxMode): Promise<BrowserStatus> {
  const key = `${mode}\0${executablePath}`;
  let status = statuses.get(key);
  if (status === undefined) {
    status = probeStatus(executablePath, mode);
    statuses.set(key, status);
  }
  return status;
}

/**
 * True when `executablePath` (default: CHROMIUM_PATH, then /usr/bin/chromium) exists, is
 * executable and actually starts with the pool's switches, without its sandbox. It says whether
 * Chromium is installed and works, not whether the pool may run it here (`browserStatus`: not as
 * root without BROWSER_SANDBOX=off). The answer is cached per path.
 */
export function isBrowserAvailable(executablePath: string = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH): Promise<boolean> {
  return isExecutable(executablePath).then(async (executable) => executable && (await startsUnsandboxed(executablePath)) === undefined);
}

/** One launch without the sandbox per path, shared by both questions. */
function startsUnsandboxed(executablePath: string): Promise<string | undefined> {
  let failure = unsandboxedStarts.get(executablePath);
  if (failure === undefined) {
    failure = launches(executablePath, false);
    unsandboxedStarts.set(executablePath, failure);
  }
  return failure;
}

async function probeStatus(executablePath: string, mode: BrowserSandboxMode): Promise<BrowserStatus> {
  if (!(await isExecutable(executablePath))) return { available: false, reason: `no Chromium found at ${executablePath}` };
  const uid = currentUid();
  let probe: SandboxProbe | undefined;
  if (needsSandboxProbe(mode, uid)) {
    const failure = await launches(executablePath, true);
    if (failure === undefined) return { available: true, sandboxed: true };
    if (!isSandboxFailure(failure)) return { available: false, reason: `Chromium at ${executablePath} does not start: ${brief(failure)}` };
    probe = { usable: false, why: explainSandboxFailure(readUserNamespaceFacts()) };
  }
  const decision = decideSandbox(mode, uid, probe);
  if (!decision.launch) return { available: false, reason: decision.reason };
  if (decision.sandboxed) return { available: true, sandboxed: true };
  const failure = await startsUnsandboxed(executablePath);
  if (failure !== undefined) return { available: false, reason: `Chromium at ${executablePath} does not start: ${brief(failure)}` };
  return { available: true, sandboxed: false, reason: decision.reason };
}

async function isExecutable(executablePath: string): Promise<boolean> {
  try {
    await access(executablePath, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Launches Chromium once and closes it: undefined when it started, else what went wrong. */
async function launches(executablePath: string, sandboxed: boolean): Promise<string | undefined> {
  try {
    const launched = await launchBrowser({ executablePath, sandboxed });
    await launched.close();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** A launch failure for a log line: Playwright's message holds Chromium's whole start-up log. */
function brief(message: string): string {
  return message.replace(/\s+/g, ' ').trim().slice(0, 300);
}
