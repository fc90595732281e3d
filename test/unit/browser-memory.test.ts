/**
 * The renderer watchdog (src/browser/memory.ts) on stand-in processes: a child of this process
 * whose command line says `--type=renderer`, as Chromium's do, that grows past the limit is
 * killed; one that stays below, or that is not a renderer, is left alone. Linux only (/proc).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { MemoryWatch, processTree } from '../../src/browser/memory.ts';

const skip = process.platform === 'linux' ? false : 'the process tree is read from /proc (Linux only)';

/** A child that holds `mb` MB, touched so it is resident, then waits; `--type=<type>` on its command line. */
async function holder(mb: number, type: string): Promise<ChildProcess> {
  const script = `const b = Buffer.alloc(${mb} * 1024 * 1024, 1); process.stdout.write('ready'); setInterval(() => b[0]++, 1000);`;
  const child = spawn(process.execPath, ['-e', script, '--', `--type=${type}`], { stdio: ['ignore', 'pipe', 'ignore'] });
  await once(child.stdout!, 'data');
  return child;
}

const exited = (child: ChildProcess) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit').then(() => undefined));

describe('renderer memory watchdog', { skip }, () => {
  test('processTree finds this process and its children with their resident memory', async () => {
    const child = await holder(64, 'utility');
    try {
      const tree = processTree(process.pid);
      const entry = tree.find((item) => item.pid === child.pid);
      assert.ok(entry, 'the child is in the tree');
      assert.ok(entry.rssBytes > 60 * 1024 * 1024, `${entry.rssBytes} bytes resident`);
      assert.equal(entry.renderer, false);
      assert.equal(tree[0].pid, process.pid);
    } finally {
      child.kill();
    }
  });

  test('a renderer past the limit is killed; a smaller one and a non-renderer are not', async () => {
    const big = await holder(160, 'renderer');
    const small = await holder(8, 'renderer');
    const other = await holder(160, 'utility');
    const watch = new MemoryWatch(process.pid, { rendererLimitBytes: 120 * 1024 * 1024, intervalMs: 20 });
    const started = Date.now();
    const end = watch.watchPage();
    try {
      await exited(big);
      assert.equal(big.signalCode, 'SIGKILL');
      assert.equal(watch.kills, 1);
      assert.ok(watch.killedSince(started));
      assert.equal(small.exitCode, null);
      assert.equal(small.signalCode, null);
      assert.equal(other.signalCode, null);
      assert.ok(watch.totalBytes() > 160 * 1024 * 1024, 'the tree total counts every process');
    } finally {
      end();
      watch.stop();
      small.kill();
      other.kill();
      await Promise.all([exited(small), exited(other)]);
    }
  });

  test('no page, no reading: the watchdog stops when the last page ends', async () => {
    const watch = new MemoryWatch(process.pid, { rendererLimitBytes: 120 * 1024 * 1024, intervalMs: 20 });
    const end = watch.watchPage();
    end();
    const big = await holder(160, 'renderer');
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(big.signalCode, null, 'killed with no page rendering');
      assert.equal(watch.kills, 0);
    } finally {
      big.kill();
      watch.stop();
    }
  });
});
