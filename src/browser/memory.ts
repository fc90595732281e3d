/**
 * The memory of a Chromium process tree, read from /proc (Linux), and the watchdog that ends a
 * page whose renderer passes its limit. A renderer's memory is mostly not V8's (a huge text node,
 * its layout, an inflated document), so no Chromium switch bounds it; its resident set is what
 * the machine pays, so that is what is measured. Each request renders in its own incognito
 * context, and Chromium never shares a renderer process between contexts, so killing one
 * renderer ends one request's page only. Elsewhere than Linux nothing is measured.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ChromiumProcess {
  pid: number;
  /** Resident set size. */
  rssBytes: number;
  /** A renderer (`--type=renderer`): the process that runs a page's documents and scripts. */
  renderer: boolean;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function rssBytesOf(pid: number): number | undefined {
  const status = readText(`/proc/${pid}/status`);
  const kb = status === undefined ? undefined : /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

/** Direct children of `pid`: every thread's list (Chromium starts its children from a launcher thread). */
function childrenOf(pid: number): number[] {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  let listed = false;
  for (const tid of threads) {
    const list = readText(`/proc/${pid}/task/${tid}/children`);
    if (list === undefined) continue;
    listed = true;
    for (const child of list.trim().split(/\s+/)) if (child !== '') children.push(Number(child));
  }
  return listed ? children : childrenByParent(pid);
}

/** The slow way, for kernels without the `children` lists: every process whose parent is `pid`. */
function childrenByParent(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    // The parent is the second field after the command, which is in parentheses and may hold spaces.
    const stat = readText(`/proc/${name}/stat`);
    const parent = stat === undefined ? undefined : /\) \S+ (\d+)/.exec(stat)?.[1];
    if (parent !== undefined && Number(parent) === pid) children.push(Number(name));
  }
  return children;
}

/** `pid` and its descendants, each with its resident memory; empty when `pid` is gone or /proc is not there. */
export function processTree(pid: number): ChromiumProcess[] {
  const tree: ChromiumProcess[] = [];
  const stack = [pid];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (seen.has(current)) continue;
    seen.add(current);
    const rssBytes = rssBytesOf(current);
    if (rssBytes === undefined) continue;
    // Chromium rewrites its command line into one space-separated title.
    const cmdline = readText(`/proc/${current}/cmdline`) ?? '';
    tree.push({ pid: current, rssBytes, renderer: /(^|[\s\0])--type=renderer([\s\0]|$)/.test(cmdline) });
    stack.push(...childrenOf(current));
  }
  return tree;
}

/** The browser process started with `--user-data-dir=<userDataDir>` by this process, if /proc shows it. */
export function findBrowserPid(userDataDir: string): number | undefined {
  for (const pid of childrenOf(process.pid)) {
    const cmdline = readText(`/proc/${pid}/cmdline`) ?? '';
    if (cmdline.includes(`--user-data-dir=${userDataDir}`) && !cmdline.includes('--type=')) return pid;
  }
  return undefined;
}

export interface MemoryWatchOptions {
  /** A renderer whose resident set passes this is killed, and its page fails. */
  rendererLimitBytes: number;
  /** How often the tree is read while pages render. */
  intervalMs: number;
}

/**
 * Reads one browser's process tree while pages render and kills any renderer past its limit (a
 * kill, not a request: the renderer may be too busy to answer one). The page sees its renderer
 * crash; `killedSince` tells it the crash was this watchdog's doing.
 */
export class MemoryWatch {
  readonly #pid: number;
  readonly #options: MemoryWatchOptions;
  #timer: NodeJS.Timeout | undefined;
  #pages = 0;
  #stopped = false;
  #lastKillAt = 0;
  #kills = 0;
  #lastTotal = 0;
  #lastReadAt = 0;

  constructor(pid: number, options: MemoryWatchOptions) {
    this.#pid = pid;
    this.#options = options;
  }

  /** Renderers killed for their memory so far. */
  get kills(): number {
    return this.#kills;
  }

  /** Resident memory of the whole tree: the last reading when it is younger than `maxAgeMs`, else read now. */
  totalBytes(maxAgeMs = 1_000): number {
    if (this.#stopped) return 0;
    if (Date.now() - this.#lastReadAt > maxAgeMs) this.check();
    return this.#lastTotal;
  }

  /** Whether a renderer was killed at or after `since` (epoch ms). */
  killedSince(since: number): boolean {
    return this.#kills > 0 && this.#lastKillAt >= since;
  }

  /** A page starts rendering: the tree is read every interval until the last page ends (the answer ends this one). */
  watchPage(): () => void {
    this.#pages += 1;
    if (this.#timer === undefined && !this.#stopped) this.#tick();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#pages -= 1;
      if (this.#pages === 0) this.#pause();
    };
  }

  /** The browser is gone: nothing more to read. */
  stop(): void {
    this.#stopped = true;
    this.#pause();
  }

  #pause(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Reads now, then again soon: four times as often while a renderer is past half its limit, as a bomb grows by hundreds of MB a second. */
  #tick(): void {
    const largest = this.check();
    const delay = largest > this.#options.rendererLimitBytes / 2 ? Math.max(10, Math.floor(this.#options.intervalMs / 4)) : this.#options.intervalMs;
    this.#timer = setTimeout(() => this.#tick(), delay);
    this.#timer.unref();
  }

  /** One reading: kills every renderer over the limit. Answers the largest renderer's size. */
  check(): number {
    let total = 0;
    let largest = 0;
    for (const entry of processTree(this.#pid)) {
      total += entry.rssBytes;
      if (entry.renderer) largest = Math.max(largest, entry.rssBytes);
      if (!entry.renderer || entry.rssBytes <= this.#options.rendererLimitBytes) continue;
      try {
        process.kill(entry.pid, 'SIGKILL');
        this.#lastKillAt = Date.now();
        this.#kills += 1;
      } catch {
        // Already gone.
      }
    }
    this.#lastTotal = total;
    this.#lastReadAt = Date.now();
    return largest;
  }
}
