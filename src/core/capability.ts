/**
 * What a capability module (outbound, pdf, ocr, browser, search, and the upstream adapters after
 * them) exports, so the registry (src/capabilities.ts) can treat them alike: how it reads and
 * validates its settings, how it starts, how it closes. Settings are read at start-up, so a typo
 * stops the start with the variable's name instead of failing the first request.
 */
import type { EnvReader } from './env.ts';

export interface Capability<Settings, Instance, Deps = void> {
  readonly name: string;
  /** Reads and validates the module's variables; throws a ConfigError naming the bad one. */
  settings(env: EnvReader): Settings;
  start(settings: Settings, deps: Deps): Instance;
  close(instance: Instance): Promise<void>;
}
