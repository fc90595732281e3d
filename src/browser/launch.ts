/**
 * Starting one Chromium process: the system browser (never a downloaded one), headless, with a
 * fresh temporary profile that is deleted when the process goes away, and with its whole network
 * pinned to guard proxies (see guard-proxy.ts). Page traffic uses a per-request guard set on each
 * browser context; the browser-wide proxy below only catches what Chromium does on its own
 * (update and account pings) and refuses all of it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startGuardProxy, type GuardProxy } from './guard-proxy.ts';
import { findBrowserPid, MemoryWatch, type MemoryWatchOptions } from './memory.ts';

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';
export const DEFAULT_LAUNCH_TIMEOUT_MS = 30_000;
const PROFILE_PREFIX = 'gleaner-chromium-';

/**
 * Chromium switches. The background-networking ones keep Chromium from dialling its own services
 * (refused on a closed network, pointless elsewhere); the rest pin every byte to the guard.
 * `--no-sandbox` only when the pool runs Chromium unsandboxed (sandbox.ts decides when).
 */
export function chromiumArgs(proxyUrl: string, options: { jsHeapMb?: number; sandboxed: boolean }): string[] {
  return [
    '--headless',
    ...(options.sandboxed ? [] : ['--no-sandbox']),
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--proxy-server=${proxyUrl}`,
    // Chromium never proxies loopback by default; `<-loopback>` removes that implicit bypass.
    '--proxy-bypass-list=<-loopback>',
    // WebRTC may send UDP (STUN) straight to any address; only proxied TCP is left.
    '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    // Belt and braces: the browser itself can resolve no name and reach no address but the
    // proxy's, so a path that ignored the proxy would fail instead of connecting.
    '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
    // Keeps cross-site frames in the page's process: there the request interception sees them,
    // and the renderer memory limit bounds the whole page. With site isolation each cross-site
    // frame is a renderer of its own, each under its own limit (docs/browser.md, "Site isolation").
    '--disable-site-isolation-trials',
    // A page's JavaScript heap fails (its renderer crashes) well before the renderer's own limit.
    ...(options.jsHeapMb !== undefined ? [`--js-flags=--max-old-space-size=${options.jsHeapMb}`] : []),
  ];
}

export interface LaunchOptions {
  executablePath: string;
  /** With Chromium's sandbox, or without it (`--no-sandbox`): availability.ts decides which. */
  sandboxed: boolean;
  /** Parent folder of the per-browser profile folders. Default: the OS temporary folder. */
  userDataRoot?: string;
  timeoutMs?: number;
  /** The renderer memory watchdog's settings (memory.ts); its limit also sizes the JavaScript heap. */
  memory?: MemoryWatchOptions;
}

export interface LaunchedBrowser {
  readonly browser: Browser;
  readonly userDataDir: string;
  /** The watchdog over this browser's process tree; undefined where /proc does not show it. */
  readonly memory: MemoryWatch | undefined;
  /** Settles once the process is gone and its profile deleted, however it ended. */
  readonly exited: Promise<void>;
  close(): Promise<void>;
}

/** Profiles still on disk, removed synchronously if the service exits without closing the pool. */
const liveProfiles = new Set<string>();
process.once('exit', () => {
  for (const dir of liveProfiles) rmSync(dir, { recursive: true, force: true });
});

export async function launchBrowser(options: LaunchOptions): Promise<LaunchedBrowser> {
  const userDataDir = await mkdtemp(path.join(options.userDataRoot ?? os.tmpdir(), PROFILE_PREFIX));
  liveProfiles.add(userDataDir);
  let browserGuard: GuardProxy | undefined;
  try {
    browserGuard = await startGuardProxy({ refuseAll: true });
    // A persistent context is the only way to choose the profile folder; pages use their own
    // incognito contexts created from its browser.
    const defaultContext = await chromium.launchPersistentContext(userDataDir, {
      executablePath: options.executablePath,
      headless: true,
      chromiumSandbox: options.sandboxed,
      args: chromiumArgs(browserGuard.url, { jsHeapMb: jsHeapMbFor(options.memory), sandboxed: options.sandboxed }),
      timeout: options.timeoutMs ?? DEFAULT_LAUNCH_TIMEOUT_MS,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      acceptDownloads: false,
      serviceWorkers: 'block',
    });
    const browser = defaultContext.browser();
    if (browser === null) throw new Error('The launched Chromium exposes no browser handle');
    await Promise.all(defaultContext.pages().map((page) => page.close()));
    const pid = options.memory !== undefined && process.platform === 'linux' ? findBrowserPid(userDataDir) : undefined;
    const memory = pid !== undefined && options.memory !== undefined ? new MemoryWatch(pid, options.memory) : undefined;
    return new RunningBrowser(browser, userDataDir, browserGuard, memory);
  } catch (error) {
    await browserGuard?.close();
    await removeProfile(userDataDir);
    throw error;
  }
}

/** Half of a renderer's memory for its JavaScript heap: the rest is the DOM, layout and the process itself. */
function jsHeapMbFor(memory: MemoryWatchOptions | undefined): number | undefined {
  return memory === undefined ? undefined : Math.max(64, Math.floor(memory.rendererLimitBytes / 2 / 1024 / 1024));
}

class RunningBrowser implements LaunchedBrowser {
  readonly browser: Browser;
  readonly userDataDir: string;
  readonly memory: MemoryWatch | undefined;
  readonly exited: Promise<void>;

  constructor(browser: Browser, userDataDir: string, browserGuard: GuardProxy, memory: MemoryWatch | undefined) {
    this.browser = browser;
    this.userDataDir = userDataDir;
    this.memory = memory;
    const disconnected = browser.isConnected()
      ? new Promise<void>((resolve) => browser.once('disconnected', () => resolve()))
      : Promise.resolve();
    this.exited = disconnected.then(async () => {
      memory?.stop();
      await browserGuard.close();
      await removeProfile(userDataDir);
    });
  }

  async close(): Promise<void> {
    await this.browser.close().catch(() => undefined);
    await this.exited;
  }
}

async function removeProfile(dir: string): Promise<void> {
  // Chromium may still be flushing files for a moment after the pipe closes.
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  liveProfiles.delete(dir);
}
