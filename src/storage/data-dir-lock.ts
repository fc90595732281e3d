/**
 * One process at a time may open the embedded database: the lock is the file `gleaner.lock` in
 * DATA_DIR, and a lock whose process is gone (killed, crashed) is taken over.
 *
 * - The file holds its owner's identity as JSON: pid, start time (clock ticks since boot, field 22
 *   of /proc/<pid>/stat), boot id and host name. A lock is live while a process with that pid runs
 *   and, where /proc tells, started at that time in this boot and is no zombie: a pid reused by an
 *   unrelated process after a crash or a reboot does not keep the lock. Without /proc, and for
 *   older lock files that hold a bare pid, the pid alone decides. The host name is only reported.
 * - The file appears whole: the record is written to a unique file and hard-linked to the lock
 *   name, which fails if a lock exists. (On filesystems without hard links: an exclusive create.)
 * - A stale lock is taken over only by the holder of `gleaner.lock.takeover`, created the same way.
 *   The holder reads the lock again and removes it only if it still holds the stale record it
 *   judged, then everyone races for a fresh lock, which one process wins. Without this, two
 *   processes that both saw the same stale lock could each remove it, the second removing the
 *   first one's fresh lock, and both would open the database. A takeover lasts a few system
 *   calls; a process that died during one leaves a claim that is judged like a lock.
 * - Files are removed by renaming them to a unique `.stale-<pid>-<random>` name and checking the
 *   moved file is the one meant; a file moved by mistake is linked back.
 *
 * This is a lock between processes of one machine (one pid namespace): DATA_DIR must not be
 * shared by machines or containers that run at the same time.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jsonOrUndefined } from '../core/json.ts';

export class DataDirBusyError extends Error {}

const LOCK_FILE = 'gleaner.lock';
/** How long to retry while other processes take a stale lock over or come and go. */
const SETTLE_MS = 2_000;

interface Owner {
  pid: number;
  /** Clock ticks from boot to the process start, as written in /proc/<pid>/stat. */
  start?: string;
  /** /proc/sys/kernel/random/boot_id: start times only compare within one boot. */
  boot?: string;
  host?: string;
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
function procStat(pid: number): { state: string; start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
  return fields.length > 19 ? { state: fields[0], start: fields[19] } : undefined;
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

let self: Owner | undefined;
function thisProcess(): Owner {
  self ??= { pid: process.pid, start: procStat(process.pid)?.start, boot: bootId(), host: os.hostname() };
  return self;
}

/** The owner a lock file names: JSON, or a bare pid as written by earlier versions. */
function parseOwner(text: string): Owner | undefined {
  let value = jsonOrUndefined(text);
  if (typeof value === 'number') value = { pid: value };
  if (typeof value !== 'object' || value === null) return undefined;
  const { pid, start, boot, host } = value as Record<string, unknown>;
  if (!Number.isInteger(pid) || (pid as number) <= 0) return undefined;
  return {
    pid: pid as number,
    start: typeof start === 'string' ? start : undefined,
    boot: typeof boot === 'string' ? boot : undefined,
    host: typeof host === 'string' ? host : undefined,
  };
}

function alive(owner: Owner): boolean {
  const me = thisProcess();
  if (owner.boot && me.boot && owner.boot !== me.boot) return false; // written before a reboot
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // No start time to tell: a lock naming our own pid was left by an earlier process.
  if (owner.start === undefined) return owner.pid !== process.pid;
  const stat = procStat(owner.pid);
  if (!stat) return true; // the process exists but /proc does not show it: trust the pid
  return stat.start === owner.start && stat.state !== 'Z' && stat.state !== 'X';
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

const uniqueSuffix = () => `${process.pid}-${randomBytes(6).toString('hex')}`;

/** Creates `file` holding `content`, whole, unless it exists. */
function createExclusive(file: string, content: string): boolean {
  const temp = `${file}.new-${uniqueSuffix()}`;
  writeFileSync(temp, content, { flag: 'wx' });
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errorCode(error)!)) throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  try {
    writeFileSync(file, content, { flag: 'wx' }); // no hard links here: briefly empty to readers
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

/** Removes `file` if it still holds `expected`; a file that changed meanwhile is put back. */
function removeIfUnchanged(file: string, expected: string): void {
  if (readOrNull(file) !== expected) return;
  const aside = `${file}.stale-${uniqueSuffix()}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  try {
    if (readOrNull(aside) !== expected) linkSync(aside, file);
  } catch {
    // a newer file took the name meanwhile: it stays
  } finally {
    rmSync(aside, { force: true });
  }
}

function describeOwner(owner: Owner): string {
  return `process ${owner.pid}${owner.host && owner.host !== thisProcess().host ? ` on ${owner.host}` : ''}`;
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  const claim = `${file}.takeover`;
  const record = JSON.stringify(thisProcess());
  const deadline = Date.now() + SETTLE_MS;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0 && Date.now() > deadline) {
      throw new DataDirBusyError(`Could not lock ${dataDir}: other processes keep taking its lock over.`);
    }
    if (createExclusive(file, record)) return () => removeIfUnchanged(file, record);
    const held = readOrNull(file);
    if (held !== null) {
      const owner = parseOwner(held);
      if (owner && alive(owner)) {
        throw new DataDirBusyError(`The embedded database in ${dataDir} is in use by ${describeOwner(owner)}.`);
      }
      // Stale. Whoever holds the claim removes it, if it is still this stale record.
      if (createExclusive(claim, record)) {
        try {
          removeIfUnchanged(file, held);
        } finally {
          removeIfUnchanged(claim, record);
        }
        continue;
      }
      const claimHeld = readOrNull(claim);
      const claimer = claimHeld === null ? undefined : parseOwner(claimHeld);
      if (claimHeld !== null && !(claimer && alive(claimer))) removeIfUnchanged(claim, claimHeld);
      else if (claimHeld !== null) sleep(5); // another process is taking the lock over
    }
  }
}
