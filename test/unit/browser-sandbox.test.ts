/**
 * The browser sandbox decision (src/browser/sandbox.ts, issue 33 defect 5): from BROWSER_SANDBOX,
 * the user id and what a probe launch with the sandbox found, whether Chromium runs sandboxed,
 * without its sandbox (and why), or not at all; and the switches it is launched with.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserStatus } from '../../src/browser/availability.ts';
import { chromiumArgs } from '../../src/browser/launch.ts';
import { createBrowserPool } from '../../src/browser/pool.ts';
import {
  BROWSER_SANDBOX_MODES,
  decideSandbox,
  explainSandboxFailure,
  isSandboxFailure,
  needsSandboxProbe,
  rootRefusal,
  type SandboxProbe,
} from '../../src/browser/sandbox.ts';

const USABLE: SandboxProbe = { usable: true };
const UNUSABLE: SandboxProbe = { usable: false, why: 'unprivileged user namespaces are not available: user.max_user_namespaces is 0' };
const USER = 1000;
const ROOT = process.geteuid?.() === 0;

describe('the browser sandbox decision', () => {
  test('as a user with user namespaces: sandboxed, unless BROWSER_SANDBOX=off', () => {
    assert.deepEqual(decideSandbox('auto', USER, USABLE), { launch: true, sandboxed: true });
    assert.deepEqual(decideSandbox('on', USER, USABLE), { launch: true, sandboxed: true });
    const off = decideSandbox('off', USER, undefined);
    assert.ok(off.launch && !off.sandboxed);
    assert.match(off.reason, /BROWSER_SANDBOX=off/);
  });

  test('as a user without user namespaces: auto runs unsandboxed and says why; on refuses', () => {
    const auto = decideSandbox('auto', USER, UNUSABLE);
    assert.ok(auto.launch && !auto.sandboxed);
    assert.match(auto.reason, /sandbox cannot start here: unprivileged user namespaces are not available: user\.max_user_namespaces is 0/);
    const on = decideSandbox('on', USER, UNUSABLE);
    assert.equal(on.launch, false);
    assert.match(on.reason, /BROWSER_SANDBOX=on.*user\.max_user_namespaces is 0/);
  });

  test('as root: refused unless BROWSER_SANDBOX=off, whatever a probe would say', () => {
    for (const mode of ['auto', 'on'] as const) {
      for (const probe of [USABLE, UNUSABLE, undefined]) {
        const decision = decideSandbox(mode, 0, probe);
        assert.equal(decision.launch, false, `${mode} as root`);
        assert.match(decision.launch ? '' : decision.reason, /runs as root \(uid 0\).*BROWSER_SANDBOX=off/);
      }
      assert.match(rootRefusal(mode, 0) ?? '', /root/);
    }
    const off = decideSandbox('off', 0, undefined);
    assert.ok(off.launch && !off.sandboxed);
    assert.match(off.reason, /BROWSER_SANDBOX=off and the service runs as root/);
    assert.equal(rootRefusal('off', 0), undefined);
  });

  test('a probe launch with the sandbox is needed only as a user who did not turn it off', () => {
    assert.equal(needsSandboxProbe('auto', USER), true);
    assert.equal(needsSandboxProbe('on', USER), true);
    assert.equal(needsSandboxProbe('off', USER), false);
    for (const mode of BROWSER_SANDBOX_MODES) assert.equal(needsSandboxProbe(mode, 0), false, mode);
    // No user id (Windows): no root rule, the probe decides.
    assert.equal(needsSandboxProbe('auto', undefined), true);
    assert.equal(rootRefusal('auto', undefined), undefined);
  });

  test("Chromium's sandbox failures are told from other launch failures", () => {
    assert.equal(isSandboxFailure('[1:1:ERROR:content/browser/zygote_host/zygote_host_impl_linux.cc:130] No usable sandbox! If this is a Debian system…'), true);
    assert.equal(isSandboxFailure('Running as root without --no-sandbox is not supported. See https://crbug.com/638180.'), true);
    assert.equal(isSandboxFailure("Chromium sandboxing failed!\n  - (alternative): Launch Chromium without sandbox using 'chromiumSandbox: false' option"), true);
    assert.equal(isSandboxFailure('Failed to launch the browser process: spawn /usr/bin/chromium ENOENT'), false);
    assert.equal(isSandboxFailure('Timeout 30000ms exceeded.'), false);
  });

  test('the reason names what forbids user namespaces, when /proc shows it', () => {
    assert.match(explainSandboxFailure({ maxUserNamespaces: '0' }), /user\.max_user_namespaces is 0/);
    assert.match(explainSandboxFailure({ unprivilegedUsernsClone: '0' }), /kernel\.unprivileged_userns_clone is 0/);
    assert.match(explainSandboxFailure({ apparmorRestrict: '1' }), /AppArmor/);
    assert.match(explainSandboxFailure({ seccomp: '2' }), /seccomp filter/);
    assert.match(explainSandboxFailure({ maxUserNamespaces: '15000', seccomp: '0' }), /not available: the kernel refused to create one$/);
  });
});

describe('Chromium switches', () => {
  test('sandboxed: no --no-sandbox; unsandboxed: --no-sandbox', () => {
    assert.ok(!chromiumArgs('http://127.0.0.1:1', { sandboxed: true }).includes('--no-sandbox'));
    assert.ok(chromiumArgs('http://127.0.0.1:1', { sandboxed: false }).includes('--no-sandbox'));
  });

  test('cross-site frames stay in the page renderer, under its memory limit, sandboxed or not', () => {
    for (const sandboxed of [true, false]) {
      const args = chromiumArgs('http://127.0.0.1:1', { sandboxed, jsHeapMb: 320 });
      assert.ok(args.includes('--disable-site-isolation-trials'));
      assert.ok(args.includes('--js-flags=--max-old-space-size=320'));
    }
  });
});

describe('the pool and the status, as root', { skip: ROOT ? false : 'needs root (CI runs as root)' }, () => {
  test('createBrowserPool refuses to be built unless sandbox is off', async () => {
    for (const sandbox of [undefined, 'auto', 'on'] as const) {
      assert.throws(() => createBrowserPool({ executablePath: '/usr/bin/chromium', navigationTimeoutMs: 1_000, sandbox }), /does not start: the service runs as root \(uid 0\)/);
    }
    const pool = createBrowserPool({ executablePath: '/usr/bin/chromium', navigationTimeoutMs: 1_000, sandbox: 'off' });
    await pool.close();
  });

  test('browserStatus answers at once, without launching anything', async () => {
    // /bin/sh is executable: a launch would be tried (and fail) if the root rule did not come first.
    const started = Date.now();
    const status = await browserStatus('/bin/sh', 'auto');
    assert.equal(status.available, false);
    assert.match(status.available ? '' : status.reason, /^the service runs as root/);
    assert.ok(Date.now() - started < 1_000);
  });
});

test('browserStatus says when there is no Chromium', async () => {
  const status = await browserStatus('/nonexistent/chromium', 'auto');
  assert.deepEqual(status, { available: false, reason: 'no Chromium found at /nonexistent/chromium' });
});
