/**
 * A start that fails on a bad setting says why and leaves nothing open behind it: no database
 * connection, no Redis connection, no thread. Run in a child process, which must then exit by
 * itself: an open handle would keep it (and a test runner hosting it) alive forever. In the scaled
 * tier the child uses the real PostgreSQL server and Redis, whose connections are the ones to leak.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestService } from '../support/service.ts';

const SERVICE_HELPER = fileURLToPath(new URL('../support/service.ts', import.meta.url));
// Far beyond a normal start (well under 10 s here): only a leaked handle gets this far.
const HANG_LIMIT_MS = 90_000;

/** Runs startTestService(env) in a fresh Node process; resolves with how the process ended. */
function startInChildProcess(env: Record<string, string>): Promise<{ code: number | null; hung: boolean; stdout: string; stderr: string }> {
  const script = `
    const { startTestService } = await import(${JSON.stringify(SERVICE_HELPER)});
    try {
      await startTestService(${JSON.stringify(env)});
      console.log('started');
    } catch (error) {
      console.log('refused: ' + error.message);
    }
    // No process.exit: the process ends only when nothing is left open.
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    let hung = false;
    const limit = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, HANG_LIMIT_MS);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(limit);
      resolve({ code, hung, stdout, stderr });
    });
  });
}

test('a PDF heap limit too small to run pdf.js stops the start with a clear message', async () => {
  await assert.rejects(startTestService({ PDF_MAX_HEAP_MB: '8' }), /PDF_MAX_HEAP_MB must be at least 64 \(got 8\)/);
});

test('a start refused after the database (and Redis) opened leaves nothing keeping the process alive', async () => {
  const outcome = await startInChildProcess({ PDF_MAX_HEAP_MB: '8' });
  assert.match(outcome.stdout, /refused: PDF_MAX_HEAP_MB must be at least 64/, outcome.stderr);
  assert.equal(outcome.hung, false, `the process was still alive ${HANG_LIMIT_MS / 1000} s after the refused start: a connection or thread was left open`);
  assert.equal(outcome.code, 0, outcome.stderr);
});
