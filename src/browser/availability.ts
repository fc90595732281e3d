/**
 * Whether a usable Chromium is installed. The search chain asks once and leaves out the engines
 * that need a browser when the answer is no, instead of failing each request.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { DEFAULT_CHROMIUM_PATH, launchBrowser } from './launch.ts';

const answers = new Map<string, Promise<boolean>>();

/**
 * True when `executablePath` (default: CHROMIUM_PATH, then /usr/bin/chromium) exists, is
 * executable and actually starts with the pool's switches. The answer is cached per path.
 */
export function isBrowserAvailable(executablePath: string = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH): Promise<boolean> {
  let answer = answers.get(executablePath);
  if (answer === undefined) {
    answer = probe(executablePath);
    answers.set(executablePath, answer);
  }
  return answer;
}

async function probe(executablePath: string): Promise<boolean> {
  try {
    await access(executablePath, constants.X_OK);
  } catch {
    return false;
  }
  try {
    const launched = await launchBrowser({ executablePath });
    await launched.close();
    return true;
  } catch {
    return false;
  }
}
