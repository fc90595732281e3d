/**
 * Whether Chromium runs with its sandbox, and whether it runs at all (BROWSER_SANDBOX, issue 33).
 *
 * Chromium's sandbox on Linux needs unprivileged user namespaces (Debian ships no setuid sandbox
 * helper), and Chromium refuses to start as root without `--no-sandbox`. Without the sandbox a
 * page that takes over its renderer process (a Chromium bug) holds everything the service's user
 * holds; as root, the machine. So:
 *
 * - `auto` (the default): sandboxed where a probe launch with the sandbox works; where it does not
 *   (no user namespaces: most containers' default seccomp profile, a kernel or AppArmor setting),
 *   unsandboxed, said at start with the reason. Never as root: the pool stays off.
 * - `on`: sandboxed or not at all. Never as root.
 * - `off`: never sandboxed, the operator's explicit choice; the only setting that lets the browser
 *   run as root.
 *
 * The decision is a pure function of the setting, the user id and what the probe launch found
 * (availability.ts runs the probe); the hints read from /proc only explain a failed probe.
 */
import { readFileSync } from 'node:fs';

export const BROWSER_SANDBOX_MODES = ['auto', 'on', 'off'] as const;
export type BrowserSandboxMode = (typeof BROWSER_SANDBOX_MODES)[number];

/** What a launch of Chromium with its sandbox found. */
export type SandboxProbe = { usable: true } | { usable: false; why: string };

/** How the pool may run Chromium here. */
export type SandboxDecision =
  | { launch: true; sandboxed: true }
  | { launch: true; sandboxed: false; reason: string }
  | { launch: false; reason: string };

/** The effective user id, or undefined where there is none (Windows). */
export function currentUid(): number | undefined {
  return process.geteuid?.();
}

/**
 * Whether deciding needs a probe launch with the sandbox: not as root (Chromium refuses to, and
 * the answer is known), not when the operator turned the sandbox off.
 */
export function needsSandboxProbe(mode: BrowserSandboxMode, uid: number | undefined): boolean {
  return mode !== 'off' && uid !== 0;
}

const ROOT_REFUSAL =
  "the service runs as root (uid 0), and Chromium's sandbox cannot run as root: run the service as an unprivileged user " +
  '(the container image does), or set BROWSER_SANDBOX=off to accept the browser running as root without its sandbox';

/** Why the pool refuses to start at all, known without a probe: as root unless BROWSER_SANDBOX=off. */
export function rootRefusal(mode: BrowserSandboxMode, uid: number | undefined): string | undefined {
  return uid === 0 && mode !== 'off' ? ROOT_REFUSAL : undefined;
}

/**
 * The decision. `probe` is what a launch with the sandbox found; it is needed exactly when
 * `needsSandboxProbe` says so (without it the sandbox is taken as unusable).
 */
export function decideSandbox(mode: BrowserSandboxMode, uid: number | undefined, probe: SandboxProbe | undefined): SandboxDecision {
  const refusal = rootRefusal(mode, uid);
  if (refusal !== undefined) return { launch: false, reason: refusal };
  if (uid === 0) {
    return {
      launch: true,
      sandboxed: false,
      reason: 'BROWSER_SANDBOX=off and the service runs as root (uid 0): a page that takes over its renderer process runs as root',
    };
  }
  if (mode === 'off') return { launch: true, sandboxed: false, reason: "BROWSER_SANDBOX=off: Chromium's sandbox is turned off" };
  if (probe?.usable === true) return { launch: true, sandboxed: true };
  const why = probe?.why ?? 'it was not tried';
  if (mode === 'on') return { launch: false, reason: `BROWSER_SANDBOX=on, and Chromium's sandbox cannot start here: ${why}` };
  return { launch: true, sandboxed: false, reason: `Chromium's sandbox cannot start here: ${why}` };
}

/**
 * Whether a failed launch failed for want of the sandbox: Chromium's own "No usable sandbox!",
 * Playwright's rewrite of it, the root refusal, or the namespace sandbox's own checks.
 */
export function isSandboxFailure(message: string): boolean {
  return /Chromium sandboxing failed|No usable sandbox|crbug\.com\/(638180|357670)|Failed to move to new namespace|zygote_host_impl_linux|namespace sandbox|credentials\.cc/i.test(message);
}

/** Kernel and container settings known to forbid unprivileged user namespaces, as read from /proc. */
export interface UserNamespaceFacts {
  /** /proc/sys/kernel/unprivileged_userns_clone (Debian's and Ubuntu's older kernels). */
  unprivilegedUsernsClone?: string;
  /** /proc/sys/user/max_user_namespaces. */
  maxUserNamespaces?: string;
  /** /proc/sys/kernel/apparmor_restrict_unprivileged_userns (Ubuntu 23.10 and later). */
  apparmorRestrict?: string;
  /** The `Seccomp:` line of /proc/self/status: 2 when a filter is in force (a container's default profile). */
  seccomp?: string;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

export function readUserNamespaceFacts(): UserNamespaceFacts {
  return {
    unprivilegedUsernsClone: read('/proc/sys/kernel/unprivileged_userns_clone'),
    maxUserNamespaces: read('/proc/sys/user/max_user_namespaces'),
    apparmorRestrict: read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'),
    seccomp: /^Seccomp:\s*(\d+)/m.exec(read('/proc/self/status') ?? '')?.[1],
  };
}

/** Why user namespaces are likely unavailable, from the facts; "no user namespaces" when none explains it. */
export function explainSandboxFailure(facts: UserNamespaceFacts): string {
  const causes: string[] = [];
  if (facts.unprivilegedUsernsClone === '0') causes.push('kernel.unprivileged_userns_clone is 0');
  if (facts.maxUserNamespaces === '0') causes.push('user.max_user_namespaces is 0');
  if (facts.apparmorRestrict === '1') causes.push('AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1)');
  if (facts.seccomp === '2') causes.push("the process runs under a seccomp filter, as in a container, whose runtime's default profile forbids creating them");
  const detail = causes.length > 0 ? causes.join('; ') : 'the kernel refused to create one';
  return `unprivileged user namespaces are not available: ${detail}`;
}
