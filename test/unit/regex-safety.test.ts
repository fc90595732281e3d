/**
 * No regular expression in src/ backtracks polynomially on the text it runs on (issue 33 defect 1:
 * one request of 240,000 slashes held the event loop 41 s in `/\/+$/`). Every regular expression
 * literal and every `new RegExp(…)` in src/ is found with the TypeScript compiler and checked with
 * recheck (a ReDoS checker: it proves a pattern linear, or finds an attack string); a pattern built
 * from constants (string literals, `String.raw` templates, an array of them joined) is checked as
 * built. What recheck does not call `safe`, and every pattern built at run time, must be listed in
 * ALLOWED below with the reason its input is bounded or trusted. An entry that matches nothing any
 * more, or whose pattern is now safe, fails too: the list says what is true of the source.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { check } from 'recheck';

interface Allowed {
  /** The file, relative to src/. */
  file: string;
  /** The literal as written (`/…/flags`), or the whole `new RegExp(…)` expression for a pattern built at run time. */
  regex: string;
  /** Why what it runs on cannot be hostile, or is small enough: one line. */
  reason: string;
}

const ALLOWED: Allowed[] = [
  {
    file: 'http/server.ts',
    regex: String.raw`/\{[^/}]+\}/`,
    reason: "runs at start on the endpoint table's own path templates, never on a request",
  },
  {
    file: 'http/server.ts',
    regex: String.raw`/\{([^/}]+)\}/g`,
    reason: "runs at start on the endpoint table's own path templates, never on a request",
  },
  {
    file: 'http/server.ts',
    regex: 'new RegExp(`^${path.split(/\\{[^/}]+\\}/).map(escapeRegExp).join(\'[^/]+\')}$`)',
    reason: "built at start from the endpoint table's templates, whose `{param}`s are whole segments: `^/a/[^/]+/b$`, each `[^/]+` ended by a `/` or the end, linear on a request's path",
  },
  {
    file: 'mcp/tools.ts',
    regex: String.raw`/\{([^/}]+)\}/g`,
    reason: "runs on the endpoint table's own path templates (a tool call's arguments only fill them in)",
  },
  {
    file: 'cli/config-doc.ts',
    regex: String.raw`/\s*\(got [^)]*\)/`,
    reason: "runs on the service's own start-up messages, when docs/configuration.md is generated",
  },
  {
    file: 'cli/config-doc.ts',
    regex: "new RegExp(`^${name}:?\\\\s+(must be .*)$`, 's')",
    reason: "built from a setting's name and run on the service's own start-up messages, when docs/configuration.md is generated",
  },
  {
    file: 'storage/migrate.ts',
    regex: String.raw`/--[^\n]*|\/\*[\s\S]*?\*\//y`,
    reason: "runs on the service's own migration scripts (src/storage/migrations), at start",
  },
];

const SRC = path.resolve(import.meta.dirname, '../../src');
/** Checks in flight at once: recheck's agent runs them in parallel. */
const IN_FLIGHT = 2;
/**
 * recheck's limits counted in steps, not milliseconds: its fuzzer then gives the same verdict on a
 * busy machine (with its default time limits, a loaded machine made it call a safe pattern
 * vulnerable). `timeout` bounds the whole check; past it the verdict is `unknown`, which fails.
 */
const CHECK_PARAMETERS = { timeout: 30_000, attackTimeout: null, incubationTimeout: null, seedingTimeout: null };

interface Site {
  file: string;
  line: number;
  /** The key an ALLOWED entry names. */
  regex: string;
  /** The pattern and flags, when known before the program runs. */
  pattern?: { source: string; flags: string };
  /** For a pattern built as `[…].join('|')`: its alternatives, each checked alone. */
  alternatives?: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The value of an expression made only of string constants (`'…'`, `` `…` ``, ``String.raw`…` ``, `+`, `[…].join(…)`), else undefined. */
function constantString(node: ts.Expression): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return constantString(node.expression);
  if (ts.isTaggedTemplateExpression(node) && node.tag.getText() === 'String.raw' && ts.isNoSubstitutionTemplateLiteral(node.template)) {
    return node.template.rawText;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = constantString(node.left);
    const right = constantString(node.right);
    return left === undefined || right === undefined ? undefined : left + right;
  }
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'join' && ts.isArrayLiteralExpression(node.expression.expression)) {
    const parts = node.expression.expression.elements.map((element) => constantString(element));
    const separator = node.arguments.length === 0 ? ',' : node.arguments.length === 1 ? constantString(node.arguments[0]) : undefined;
    return separator === undefined || parts.some((part) => part === undefined) ? undefined : parts.join(separator);
  }
  return undefined;
}

function regexSites(): Site[] {
  const sites: Site[] = [];
  for (const file of sourceFiles(SRC)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const relative = path.relative(SRC, file).split(path.sep).join('/');
    const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = node.getText();
        const slash = text.lastIndexOf('/');
        sites.push({ file: relative, line: lineOf(node), regex: text, pattern: { source: text.slice(1, slash), flags: text.slice(slash + 1) } });
      } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
        const [patternArgument, flagsArgument] = node.arguments ?? [];
        const built = patternArgument === undefined ? undefined : constantString(patternArgument);
        const flags = flagsArgument === undefined ? '' : constantString(flagsArgument);
        if (built !== undefined && flags !== undefined) {
          const joined = patternArgument;
          const alternatives =
            ts.isCallExpression(joined) && ts.isPropertyAccessExpression(joined.expression) && ts.isArrayLiteralExpression(joined.expression.expression) && joined.arguments.length === 1 && constantString(joined.arguments[0]) === '|'
              ? joined.expression.expression.elements.map((element) => constantString(element)!)
              : undefined;
          sites.push({ file: relative, line: lineOf(node), regex: `/${built}/${flags}`, pattern: { source: built, flags }, alternatives });
        } else {
          sites.push({ file: relative, line: lineOf(node), regex: node.getText().replace(/\s+/g, ' ') });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return sites;
}

const keyOf = (entry: { file: string; regex: string }) => `${entry.file} ${entry.regex}`;

test('every regular expression in src/ runs in linear time, or is allowed with a reason', { timeout: 300_000 }, async (t) => {
  const sites = regexSites();
  const allowed = new Map(ALLOWED.map((entry) => [keyOf(entry), entry]));
  assert.equal(allowed.size, ALLOWED.length, 'ALLOWED names an entry twice');
  for (const entry of ALLOWED) assert.ok(entry.reason.trim().length >= 20, `ALLOWED: give a reason for ${keyOf(entry)}`);

  // One check per distinct pattern; `g`, `y` and `d` are left out (recheck takes a pattern as a
  // search from each position, which `g` is, and `y` is less). A pattern joined from alternatives
  // is checked one alternative at a time: the search tries each in turn at each position, so it is
  // linear when each one is (recheck took 20 s on the whole of one such, well under 1 s on its parts).
  const patternsOf = (site: Site) => (site.alternatives ?? [site.pattern!.source]).map((source) => ({ source, flags: site.pattern!.flags.replace(/[gyd]/g, '') }));
  const keyOfPattern = (pattern: { source: string; flags: string }) => `/${pattern.source}/${pattern.flags}`;
  const toCheck = new Map<string, { source: string; flags: string }>();
  for (const site of sites) {
    if (site.pattern && !allowed.has(keyOf(site))) for (const pattern of patternsOf(site)) toCheck.set(keyOfPattern(pattern), pattern);
  }
  const verdicts = new Map<string, string>();
  const queue = [...toCheck.entries()];
  const checkNext = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const [key, pattern] = next;
      const result = await check(pattern.source, pattern.flags, CHECK_PARAMETERS);
      if (result.status === 'safe') verdicts.set(key, 'safe');
      else if (result.status === 'vulnerable') verdicts.set(key, `${result.complexity.summary}, attack ${result.attack.pattern}`);
      else verdicts.set(key, `unknown (${result.error.kind})`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, checkNext));

  const unjustified: string[] = [];
  let safe = 0;
  let allowedSites = 0;
  for (const site of sites) {
    if (allowed.has(keyOf(site))) {
      allowedSites += 1;
      continue;
    }
    const verdict = site.pattern ? (patternsOf(site).map((pattern) => verdicts.get(keyOfPattern(pattern))!).find((said) => said !== 'safe') ?? 'safe') : 'built at run time';
    if (verdict === 'safe') safe += 1;
    else unjustified.push(`src/${site.file}:${site.line} ${site.regex}: ${verdict}`);
  }
  const present = new Set(sites.map(keyOf));
  for (const entry of ALLOWED) if (!present.has(keyOf(entry))) unjustified.push(`ALLOWED names what src/${entry.file} no longer has: ${entry.regex}`);
  const dynamic = sites.filter((site) => !site.pattern).length;
  t.diagnostic(`${sites.length} regular expressions in src/ (${toCheck.size} distinct patterns checked, ${dynamic} built at run time): ${safe} safe, ${allowedSites} allowed with a reason (${ALLOWED.length} entries), ${unjustified.length} not`);
  assert.deepEqual(unjustified, [], 'regular expressions that may backtrack polynomially: make them linear, or add them to ALLOWED with the reason their input is bounded or trusted');
});
