import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DataDirBusyError, lockDataDir } from '../../src/storage/data-dir-lock.ts';

const MODULE_URL = new URL('../../src/storage/data-dir-lock.ts', import.meta.url).href;
const HAS_PROC = existsSync('/proc/self/stat');
const noProc = HAS_PROC ? false : 'needs /proc';

const root = mkdtempSync(path.join(os.tmpdir(), 'gleaner-lock-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => path.join(root, `d${++dirs}`);
const lockFile = (dir: string) => path.join(dir, 'gleaner.lock');

function writeLock(dir: string, content: string, name = 'gleaner.lock'): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), content);
}

function lockRecord(dir: string): { pid: number; start?: string; boot?: string; host?: string } {
  return JSON.parse(readFileSync(lockFile(dir), 'utf8'));
}

/** A pid whose process has exited (and been reaped). */
function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', '']);
  assert.ok(pid);
  return pid;
}

/** Field 22 of /proc/<pid>/stat, read here independently of the module. */
function startTicks(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function bootId(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

/**
 * A child process that loads the module and waits: each line on its stdin is a command ("lock",
 * "unlock"), each answer a line on its stdout ("ready", "locked", "busy: ...", "unlocked").
 */
class LockChild {
  readonly child: ChildProcess;
  readonly #lines: AsyncIterator<string>;

  constructor(dir: string) {
    const script = `
      import { DataDirBusyError, lockDataDir } from ${JSON.stringify(MODULE_URL)};
      import { createInterface } from 'node:readline';
      let unlock;
      console.log('ready');
      for await (const line of createInterface({ input: process.stdin })) {
        if (line === 'lock') {
          try {
            unlock = lockDataDir(${JSON.stringify(dir)});
            console.log('locked');
          } catch (error) {
            console.log(error instanceof DataDirBusyError ? 'busy: ' + error.message : 'error: ' + error.stack.replaceAll('\\n', ' | '));
          }
        } else if (line === 'unlock') {
          unlock();
          console.log('unlocked');
        }
      }`;
    this.child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.#lines = createInterface({ input: this.child.stdout! })[Symbol.asyncIterator]();
  }

  get pid(): number {
    return this.child.pid!;
  }

  async next(): Promise<string> {
    const { value, done } = await this.#lines.next();
    assert.ok(!done, 'the child process ended early');
    return value;
  }

  send(command: string): void {
    this.child.stdin!.write(command + '\n');
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }
}

async function startChild(dir: string): Promise<LockChild> {
  const child = new LockChild(dir);
  assert.equal(await child.next(), 'ready');
  return child;
}

describe('data directory lock', () => {
  test('a fresh lock records this process and its release removes it, leaving nothing behind', () => {
    const dir = freshDir();
    const unlock = lockDataDir(dir);
    const record = lockRecord(dir);
    assert.equal(record.pid, process.pid);
    assert.equal(record.host, os.hostname());
    if (HAS_PROC) {
      assert.equal(record.start, startTicks(process.pid));
      assert.equal(record.boot, bootId());
    }
    assert.deepEqual(readdirSync(dir), ['gleaner.lock']);
    unlock();
    assert.deepEqual(readdirSync(dir), []);
    unlock(); // twice is harmless
    const again = lockDataDir(dir);
    again();
  });

  test('the same process cannot lock the directory twice', { skip: noProc }, () => {
    const dir = freshDir();
    const unlock = lockDataDir(dir);
    try {
      assert.throws(() => lockDataDir(dir), DataDirBusyError);
    } finally {
      unlock();
    }
  });

  test('a lock held by another live process is busy, until that process dies', async () => {
    const dir = freshDir();
    const holder = await startChild(dir);
    try {
      holder.send('lock');
      assert.equal(await holder.next(), 'locked');
      assert.equal(lockRecord(dir).pid, holder.pid);
      assert.throws(() => lockDataDir(dir), (error: Error) => {
        assert.ok(error instanceof DataDirBusyError);
        assert.match(error.message, new RegExp(`in use by process ${holder.pid}\\.$`));
        return true;
      });
      assert.equal(lockRecord(dir).pid, holder.pid, 'a busy attempt leaves the lock alone');

      await holder.kill(); // dies holding the lock
      assert.equal(lockRecord(dir).pid, holder.pid);
      const unlock = lockDataDir(dir);
      assert.equal(lockRecord(dir).pid, process.pid);
      unlock();
    } finally {
      await holder.kill();
    }
  });

  test('a lock naming a live process (this one’s parent) with its start time is busy', { skip: noProc }, () => {
    const dir = freshDir();
    const parent = { pid: process.ppid, start: startTicks(process.ppid), boot: bootId(), host: os.hostname() };
    writeLock(dir, JSON.stringify(parent));
    assert.throws(() => lockDataDir(dir), new RegExp(`in use by process ${process.ppid}\\.$`));
    writeLock(dir, JSON.stringify({ ...parent, host: 'elsewhere' }));
    assert.throws(() => lockDataDir(dir), new RegExp(`in use by process ${process.ppid} on elsewhere\\.$`));
  });

  test('a lock whose process is gone is taken over', () => {
    const dir = freshDir();
    const pid = deadPid();
    writeLock(dir, JSON.stringify({ pid, start: '12345', boot: HAS_PROC ? bootId() : undefined, host: os.hostname() }));
    const unlock = lockDataDir(dir);
    assert.equal(lockRecord(dir).pid, process.pid);
    unlock();
    assert.deepEqual(readdirSync(dir), []);
  });

  test('pid reuse: a live pid whose start time differs from the recorded one is a stale lock', { skip: noProc }, () => {
    const dir = freshDir();
    const realStart = startTicks(process.ppid);
    writeLock(dir, JSON.stringify({ pid: process.ppid, start: String(Number(realStart) - 1), boot: bootId() }));
    const unlock = lockDataDir(dir);
    assert.equal(lockRecord(dir).pid, process.pid);
    unlock();
  });

  test('a lock written before a reboot (another boot id) is stale even if its pid and start time match', { skip: noProc }, () => {
    const dir = freshDir();
    writeLock(dir, JSON.stringify({ pid: process.ppid, start: startTicks(process.ppid), boot: 'an-earlier-boot' }));
    const unlock = lockDataDir(dir);
    assert.equal(lockRecord(dir).pid, process.pid);
    unlock();
  });

  test('old lock files holding a bare pid still work', async () => {
    const live = freshDir();
    writeLock(live, String(process.ppid));
    assert.throws(() => lockDataDir(live), new RegExp(`in use by process ${process.ppid}\\.$`));
    assert.equal(readFileSync(lockFile(live), 'utf8'), String(process.ppid));

    const dead = freshDir();
    writeLock(dead, String(deadPid()));
    const unlock = lockDataDir(dead);
    assert.equal(lockRecord(dead).pid, process.pid);
    unlock();

    // A bare pid equal to ours was written by an earlier process that had our pid (a container
    // restart): this process never writes a bare pid.
    const ours = freshDir();
    writeLock(ours, String(process.pid));
    lockDataDir(ours)();
  });

  test('an unreadable or empty lock is taken over', () => {
    for (const content of ['', 'not a pid', '{"pid":-3}', '{"pid":"12"}', '{"start":"1"}']) {
      const dir = freshDir();
      writeLock(dir, content);
      const unlock = lockDataDir(dir);
      assert.equal(lockRecord(dir).pid, process.pid, JSON.stringify(content));
      unlock();
    }
  });

  test('the release removes only its own lock', () => {
    const dir = freshDir();
    const unlock = lockDataDir(dir);
    const other = JSON.stringify({ pid: process.ppid, start: '1', boot: 'x' });
    writeFileSync(lockFile(dir), other); // another process owns the directory now
    unlock();
    assert.equal(readFileSync(lockFile(dir), 'utf8'), other);
    rmSync(lockFile(dir));
    unlock(); // nothing there: nothing to do
    assert.deepEqual(readdirSync(dir), []);
  });

  test('a takeover claim left by a dead process does not block the takeover', () => {
    const dir = freshDir();
    writeLock(dir, JSON.stringify({ pid: deadPid() }));
    writeLock(dir, JSON.stringify({ pid: deadPid() }), 'gleaner.lock.takeover');
    const unlock = lockDataDir(dir);
    assert.equal(lockRecord(dir).pid, process.pid);
    assert.deepEqual(readdirSync(dir), ['gleaner.lock']);
    unlock();
  });

  test('while a live process holds the takeover claim, a stale lock is not touched and locking gives up busy', () => {
    const dir = freshDir();
    const stale = JSON.stringify({ pid: deadPid() });
    writeLock(dir, stale);
    writeLock(dir, JSON.stringify({ pid: process.ppid, start: HAS_PROC ? startTicks(process.ppid) : undefined }), 'gleaner.lock.takeover');
    const started = Date.now();
    assert.throws(() => lockDataDir(dir), /Could not lock/);
    assert.ok(Date.now() - started >= 1_500, 'it waited for the takeover to finish');
    assert.equal(readFileSync(lockFile(dir), 'utf8'), stale);
  });

  test('several processes taking over the same stale lock at once: exactly one gets it', { timeout: 120_000 }, async () => {
    const CHILDREN = 6;
    for (let round = 0; round < 4; round++) {
      const dir = freshDir();
      // Alternate the two formats a stale lock may have.
      const pid = deadPid();
      writeLock(dir, round % 2 ? String(pid) : JSON.stringify({ pid, start: '1', host: os.hostname() }));
      const children = await Promise.all(Array.from({ length: CHILDREN }, () => startChild(dir)));
      try {
        for (const child of children) child.send('lock'); // all loaded and waiting: go
        const answers = await Promise.all(children.map((child) => child.next()));
        const winners = children.filter((_, i) => answers[i] === 'locked');
        assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(answers)}`);
        const [winner] = winners;
        for (const answer of answers.filter((a) => a !== 'locked')) {
          assert.match(answer, new RegExp(`^busy: The embedded database in .* is in use by process ${winner.pid}\\.$`), `round ${round}`);
        }
        assert.equal(lockRecord(dir).pid, winner.pid, 'the lock names the winner');
        assert.deepEqual(readdirSync(dir), ['gleaner.lock'], 'no claim or moved files left behind');
        winner.send('unlock');
        assert.equal(await winner.next(), 'unlocked');
        assert.deepEqual(readdirSync(dir), []);
      } finally {
        await Promise.all(children.map((child) => child.kill()));
      }
    }
  });
});
