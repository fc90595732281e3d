/**
 * Receiver examples of the docs, run as written: the fenced ```js block taken from the document,
 * started in its own Node process on loopback (PORT=0, GLEANER_WEBHOOK_SECRET), and sent events
 * as the service sends them.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WEBHOOK_SIGNATURE_HEADER } from '../../src/webhooks/signature.ts';

/** The first fenced ```js block of a document's section. */
export function jsBlock(section: string, where: string): string {
  const block = /^```js\n([\s\S]*?)^```$/m.exec(section);
  assert.ok(block, `${where} has a \`\`\`js block`);
  return block[1]!;
}

export interface DocReceiver {
  /** Where it listens, on loopback (the examples listen on every interface). */
  url: string;
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /**
   * Everything it printed, once that matches `pattern`. The example answers before its printed
   * line reaches this process through the pipe, so a test waits for the line, not for the answer.
   */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/** Starts the example; resolves once it prints `listening on <port>`. */
export async function startDocReceiver(source: string, secret: string, name: string): Promise<DocReceiver> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `gleaner-${name}-`));
  const file = path.join(dir, 'receiver.mjs');
  writeFileSync(file, source);
  const child = spawn(process.execPath, [file], { env: { ...process.env, PORT: '0', GLEANER_WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const port = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the example did not start:\n${output}`)), 15_000);
      child.stdout?.on('data', () => {
        const match = /listening on (\d+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the example exited with ${code}:\n${output}`));
      });
    });
    const waitFor = (pattern: RegExp, timeoutMs = 15_000) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (!pattern.test(output)) return false;
          clearTimeout(timer);
          child.stdout?.off('data', check);
          child.stderr?.off('data', check);
          resolve(output);
          return true;
        };
        const timer = setTimeout(() => {
          child.stdout?.off('data', check);
          child.stderr?.off('data', check);
          reject(new Error(`the example did not print ${pattern} within ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        if (check()) return;
        child.stdout?.on('data', check);
        child.stderr?.on('data', check);
      });
    return { url: `http://127.0.0.1:${port}/`, child, output: () => output, waitFor, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** POSTs a payload with this signature header (none when undefined); the status it answered. */
export async function postEvent(url: string, payload: string, signature: string | undefined): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== undefined) headers[WEBHOOK_SIGNATURE_HEADER] = signature;
  const response = await fetch(url, { method: 'POST', headers, body: payload });
  await response.arrayBuffer();
  return response.status;
}
