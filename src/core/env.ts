/**
 * The one environment reader. Every setting of the service is read through it, so every variable
 * is validated the same way and a bad value stops the start with a message naming the variable
 * (twelve-factor configuration; docs/configuration.md lists them all, src/core/settings.ts says what each means).
 * Unset and blank variables mean "use the default".
 */

/** A setting the service cannot start with. */
export class ConfigError extends Error {
  /** The variable at fault, when one is. */
  readonly variable?: string;

  constructor(message: string, variable?: string) {
    super(message);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

const WHOLE_NUMBER = /^[+-]?\d+$/;

export class EnvReader {
  readonly env: NodeJS.ProcessEnv;

  constructor(env: NodeJS.ProcessEnv) {
    this.env = env;
  }

  /** The trimmed value, or undefined when unset or blank. */
  text(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  /** A whole number ≥ `min` (default 0). */
  integer(name: string, options: { min?: number } = {}): number | undefined {
    const min = options.min ?? 0;
    const raw = this.text(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!WHOLE_NUMBER.test(raw) || !Number.isSafeInteger(value) || value < min) {
      throw new ConfigError(`${name} must be an integer ≥ ${min} (got "${raw}").`, name);
    }
    return value;
  }

  /** A decimal number ≥ `min` (default 0): intervals in seconds. */
  number(name: string, options: { min?: number } = {}): number | undefined {
    const min = options.min ?? 0;
    const raw = this.text(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!/^[+-]?(\d+(?:\.\d*)?|\.\d+)$/.test(raw) || !Number.isFinite(value) || value < min) {
      throw new ConfigError(`${name} must be a number ≥ ${min} (got "${raw}").`, name);
    }
    return value;
  }

  /** A whole number ≥ 1: counts, sizes, time limits. */
  positiveInteger(name: string): number | undefined {
    const raw = this.text(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!WHOLE_NUMBER.test(raw) || !Number.isSafeInteger(value) || value < 1) {
      throw new ConfigError(`${name} must be a positive integer (got "${raw}").`, name);
    }
    return value;
  }

  /** `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`, any case. */
  flag(name: string): boolean | undefined {
    const raw = this.text(name);
    if (raw === undefined) return undefined;
    const lower = raw.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(lower)) return true;
    if (['0', 'false', 'no', 'off'].includes(lower)) return false;
    throw new ConfigError(`${name} must be true or false (got "${raw}").`, name);
  }

  /** A comma-separated list, items trimmed, blanks dropped. */
  list(name: string): string[] {
    return (this.env[name] ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }

  /** An absolute http(s) URL. */
  url(name: string): string | undefined {
    const raw = this.text(name);
    if (raw === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(`${name} must be an absolute URL (got "${raw}").`, name);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL (got "${raw}").`, name);
    return raw;
  }

  /** Runs a module's own reader, turning whatever it throws into a start-up configuration error. */
  read<T>(read: (env: EnvReader) => T): T {
    try {
      return read(this);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError((error as Error).message);
    }
  }
}

export function envReader(env: NodeJS.ProcessEnv = process.env): EnvReader {
  return new EnvReader(env);
}
