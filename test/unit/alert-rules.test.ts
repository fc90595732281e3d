/**
 * The Prometheus alert rules of docs/operations.md against what the server really exports:
 * - every metric a rule reads, and every label it matches or groups by, is in a GleanerMetrics
 *   registry's output (fed one upstream call and one circuit change);
 * - `promtool check rules` accepts the block, and `promtool test rules` plays series through it:
 *   an upstream answering `blocked` ten times a minute fires GleanerUpstreamFailing, healthy
 *   traffic fires nothing, a circuit open long enough fires GleanerUpstreamCircuitOpen, … Each
 *   alert has a scenario that fires it, and every scenario says which alerts stay quiet.
 * Without promtool (the Debian package prometheus) its part is skipped, and says so.
 * Also: how GleanerMetrics turns runtime events into the upstream series the rules read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GleanerMetrics, type MetricsSources } from '../../src/metrics/index.ts';
import type { RuntimeEvent } from '../../src/adapters/kit/types.ts';

const DOC = new URL('../../docs/operations.md', import.meta.url);

// ---------------------------------------------------------------------------------------------
// The rule file, out of the documentation

/** The one ```yaml block of docs/operations.md that is a rule file (`groups:`). */
function ruleFileOf(markdown: string): string {
  const blocks = [...markdown.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)].map((m) => m[1]);
  const ruleFiles = blocks.filter((block) => /^groups:/m.test(block.replace(/^\s*#.*$/gm, '')));
  assert.equal(ruleFiles.length, 1, `docs/operations.md must hold exactly one \`\`\`yaml block with the rule file (groups:), found ${ruleFiles.length}`);
  return ruleFiles[0];
}

interface Rule {
  alert: string;
  expr: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const unquote = (value: string): string => {
  const v = value.trim();
  if (v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1).replaceAll("''", "'");
  if (v.startsWith('"') && v.endsWith('"')) return JSON.parse(v) as string;
  return v;
};

const indentOf = (line: string) => line.length - line.trimStart().length;

/**
 * The alerting rules of a rule file, read line by line: enough YAML for what a rule holds (`expr`
 * inline or as a `|`/`>` block, `labels` and `annotations` as flow or block maps). promtool, when
 * present, checks the file as a whole.
 */
function parseRules(file: string): Rule[] {
  const lines = file.split('\n');
  const rules: Rule[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = /^(\s*)- alert:\s*(\S+)\s*$/.exec(lines[i]);
    if (!start) continue;
    const keyIndent = start[1].length + 2;
    const rule: Rule = { alert: unquote(start[2]), expr: '', labels: {}, annotations: {} };
    /** Lines after `i` indented deeper than the rule's keys (blank ones included), as a block. */
    const nested = (): string[] => {
      const out: string[] = [];
      while (i + 1 < lines.length && (lines[i + 1].trim() === '' || indentOf(lines[i + 1]) > keyIndent)) out.push(lines[++i]);
      while (out.length && out[out.length - 1].trim() === '') out.pop();
      return out;
    };
    const map = (inline: string): Record<string, string> => {
      const entries: Record<string, string> = {};
      const flow = /^\{(.*)\}$/.exec(inline.trim());
      const pairs = flow ? flow[1].split(',') : nested().filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
      for (const pair of pairs) {
        const m = /^\s*([\w.-]+)\s*:\s*(.*)$/.exec(pair);
        if (m) entries[m[1]] = unquote(m[2]);
      }
      return entries;
    };
    while (i + 1 < lines.length) {
      const line = lines[i + 1];
      if (line.trim() === '' || line.trim().startsWith('#')) {
        i++;
        continue;
      }
      if (indentOf(line) !== keyIndent) break;
      i++;
      const m = /^\s*(\w+):\s*(.*)$/.exec(line);
      if (!m) continue;
      const [, key, value] = m;
      if (key === 'expr') {
        if (/^[|>][-+]?$/.test(value.trim())) {
          const block = nested();
          const depth = Math.min(...block.filter((l) => l.trim() !== '').map(indentOf));
          rule.expr = block.map((l) => l.slice(depth)).join(value.trim().startsWith('>') ? ' ' : '\n');
        } else rule.expr = unquote(value);
      } else if (key === 'labels') rule.labels = map(value);
      else if (key === 'annotations') rule.annotations = map(value);
    }
    assert.ok(rule.expr.trim(), `alert ${rule.alert} has an expr`);
    rules.push(rule);
  }
  return rules;
}

// ---------------------------------------------------------------------------------------------
// What a PromQL expression reads

/** Labels Prometheus adds to every scraped series (the target's), not the exporter. */
const TARGET_LABELS = new Set(['instance', 'job']);
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

interface ExprUse {
  /** Metric name → the labels its selectors match on. */
  metrics: Map<string, Set<string>>;
  /** Labels of `by`/`without`/`on`/`ignoring`/`group_*` clauses. */
  grouping: Set<string>;
}

/** The metric names and labels an expression uses. */
function usesOf(expr: string): ExprUse {
  const metrics = new Map<string, Set<string>>();
  const grouping = new Set<string>();
  const use = (name: string) => metrics.get(name) ?? metrics.set(name, new Set()).get(name)!;
  let rest = expr.replace(/#.*$/gm, ' ');
  // Selectors with matchers: `name{label="…", …}` (a bare `{…}` names no metric here).
  rest = rest.replace(/([A-Za-z_:][\w:]*)?\s*\{([^}]*)\}/g, (_all, name: string | undefined, matchers: string) => {
    const labels = name ? use(name) : new Set<string>();
    for (const m of matchers.matchAll(/([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)\s*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')/g)) labels.add(m[1]);
    return ' ';
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ');
  rest = rest.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_all, _kw: string, labels: string) => {
    for (const label of labels.split(',').map((l) => l.trim()).filter(Boolean)) grouping.add(label);
    return ' ';
  });
  rest = rest.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ');
  rest = rest.replace(/[A-Za-z_:][\w:]*\s*\(/g, '(');
  for (const m of rest.matchAll(/(?<![\w.])[A-Za-z_:][\w:]*/g)) if (!KEYWORDS.has(m[0].toLowerCase())) use(m[0]);
  return { metrics, grouping };
}

/** Sample name → its label names, from the text exposition format. */
function exposition(text: string): Map<string, Set<string>> {
  const samples = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+\S+/.exec(line);
    if (!m) continue;
    const labels = samples.get(m[1]) ?? samples.set(m[1], new Set()).get(m[1])!;
    for (const pair of (m[2] ?? '').matchAll(/([A-Za-z_]\w*)="(?:[^"\\]|\\.)*"/g)) labels.add(pair[1]);
  }
  return samples;
}

const SOURCES: MetricsSources = {
  pools: () => [{ pool: 'ocr', workers: 2, busy: 1, queued: 0, recycled: 0 }],
  holds: async () => ({ count: 0, credits: 0 }),
};

const call = (fields: Partial<Extract<RuntimeEvent, { type: 'call' }>> = {}): RuntimeEvent => ({
  type: 'call',
  upstream: 'bing',
  operation: 'search',
  verdict: 'ok',
  status: 200,
  durationMs: 250,
  attempts: 1,
  at: Date.now(),
  ...fields,
});

const circuit = (upstream: string, state: 'open' | 'half_open' | 'closed'): RuntimeEvent => ({
  type: 'circuit',
  upstream,
  state,
  openUntil: state === 'closed' ? undefined : Date.now() + 30_000,
  trips: state === 'closed' ? 0 : 1,
  at: Date.now(),
});

/** What one sample line says (`name{labels} value`, all the given labels matching), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

const rules = parseRules(ruleFileOf(readFileSync(DOC, 'utf8')));

test('the rule file holds the upstream alerts and every rule has a severity', () => {
  const names = rules.map((r) => r.alert);
  for (const name of ['GleanerUpstreamFailing', 'GleanerUpstreamParserDrift', 'GleanerUpstreamCircuitOpen', 'GleanerServerErrors', 'GleanerPoolSaturated', 'GleanerCreditHoldsStuck']) {
    assert.ok(names.includes(name), `${name} is in docs/operations.md (found ${names.join(', ')})`);
  }
  assert.equal(new Set(names).size, names.length, 'alert names are unique');
  for (const rule of rules) assert.match(rule.labels.severity ?? '', /^(page|ticket)$/, `${rule.alert} has severity page or ticket`);
});

test('every metric and label the rules read is one GleanerMetrics exports', async () => {
  const metrics = new GleanerMetrics(SOURCES);
  metrics.request('POST', '/v1/engine-search', 200, 0.2);
  metrics.settled({ product: 'scraping', charged: 3, released: 0 });
  metrics.upstream(call({ verdict: 'blocked', status: 429 }));
  metrics.upstream(circuit('bing', 'open'));
  const exported = exposition(await metrics.text());

  let checked = 0;
  for (const rule of rules) {
    const { metrics: used, grouping } = usesOf(rule.expr);
    assert.ok(used.size > 0, `${rule.alert}: no metric found in ${rule.expr}`);
    const available = new Set(TARGET_LABELS);
    for (const [name, matched] of used) {
      const labels = exported.get(name);
      assert.ok(labels, `${rule.alert} reads ${name}, which /metrics does not serve`);
      for (const label of labels) available.add(label);
      for (const label of matched) assert.ok(labels.has(label) || TARGET_LABELS.has(label), `${rule.alert} matches ${name} on "${label}", a label it does not have (${[...labels].join(', ')})`);
      checked++;
    }
    for (const label of grouping) assert.ok(available.has(label), `${rule.alert} groups by "${label}", a label none of its metrics has`);
  }
  assert.ok(checked >= rules.length);
});

test('the expression reader finds metrics, matchers and grouping labels', () => {
  const { metrics, grouping } = usesOf(
    'histogram_quantile(0.95, sum by (upstream, le) (rate(x_bucket{verdict=~"a|b", job!="j"}[15m] offset 5m))) > 1e3 and on () y unless ignoring(z) w',
  );
  assert.deepEqual([...metrics.keys()].sort(), ['w', 'x_bucket', 'y']);
  assert.deepEqual([...metrics.get('x_bucket')!].sort(), ['job', 'verdict']);
  assert.deepEqual([...grouping].sort(), ['le', 'upstream', 'z']);
});

// ---------------------------------------------------------------------------------------------
// promtool

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

interface Scenario {
  name: string;
  /** Series (`name{labels}`) → promtool's expanding notation, one value a minute. */
  series: Record<string, string>;
  evalAt: string;
  /** Alerts firing at `evalAt`, by name, with the labels each carries (the rule's own added). Every other alert must be quiet. */
  firing: Record<string, Array<Record<string, string>>>;
}

const T = 'instance="a:9464", job="gleaner"';
const SCENARIOS: Scenario[] = [
  {
    name: 'an upstream answering blocked 10 times a minute for 20 minutes',
    series: { [`gleaner_upstream_calls_total{upstream="bing", operation="search", verdict="blocked", ${T}}`]: '0+10x20' },
    evalAt: '20m',
    firing: { GleanerUpstreamFailing: [{ upstream: 'bing' }] },
  },
  {
    name: 'the same, not yet for 10 minutes: pending only',
    series: { [`gleaner_upstream_calls_total{upstream="bing", operation="search", verdict="blocked", ${T}}`]: '0+10x20' },
    evalAt: '6m',
    firing: {},
  },
  {
    name: 'healthy traffic: a few failures, fast calls, idle pools, holds while requests run, closed circuits',
    series: {
      [`gleaner_upstream_calls_total{upstream="bing", operation="search", verdict="ok", ${T}}`]: '0+30x40',
      [`gleaner_upstream_calls_total{upstream="bing", operation="search", verdict="blocked", ${T}}`]: '0+1x40',
      [`gleaner_upstream_calls_total{upstream="bing", operation="search", verdict="timeout", ${T}}`]: '0+1x40',
      [`gleaner_upstream_calls_total{upstream="reddit", operation="listing", verdict="empty", ${T}}`]: '0+5x40',
      [`gleaner_upstream_calls_total{upstream="reddit", operation="listing", verdict="aborted", ${T}}`]: '0+5x40',
      [`gleaner_upstream_duration_seconds_bucket{upstream="bing", operation="search", le="1", ${T}}`]: '0+30x40',
      [`gleaner_upstream_duration_seconds_bucket{upstream="bing", operation="search", le="+Inf", ${T}}`]: '0+32x40',
      [`gleaner_upstream_duration_seconds_count{upstream="bing", operation="search", ${T}}`]: '0+32x40',
      [`gleaner_upstream_circuit_open{upstream="google", ${T}}`]: '0x40',
      [`gleaner_http_requests_total{method="POST", route="/v1/engine-search", status="200", ${T}}`]: '0+50x40',
      [`gleaner_http_requests_total{method="POST", route="/v1/engine-search", status="500", ${T}}`]: '0+1x40',
      [`gleaner_pool_workers{pool="ocr", ${T}}`]: '2x40',
      [`gleaner_pool_queue_depth{pool="ocr", ${T}}`]: '1x40',
      [`gleaner_credit_holds{${T}}`]: '2x40',
    },
    evalAt: '40m',
    firing: {},
  },
  {
    name: 'the sites users ask for (web pages, documents) refusing them or slow page no one',
    series: {
      [`gleaner_upstream_calls_total{upstream="web", operation="page", verdict="blocked", ${T}}`]: '0+10x30',
      [`gleaner_upstream_calls_total{upstream="document", operation="pdf", verdict="unreachable", ${T}}`]: '0+10x30',
      [`gleaner_upstream_duration_seconds_bucket{upstream="web", operation="render", le="30", ${T}}`]: '0+10x30',
      [`gleaner_upstream_duration_seconds_bucket{upstream="web", operation="render", le="+Inf", ${T}}`]: '0+10x30',
      [`gleaner_upstream_duration_seconds_count{upstream="web", operation="render", ${T}}`]: '0+10x30',
    },
    evalAt: '30m',
    firing: {},
  },
  {
    name: 'one failure at night: a single blocked call and a single 5xx do not page',
    series: {
      [`gleaner_upstream_calls_total{upstream="bing", operation="search", verdict="blocked", ${T}}`]: '0 1x40',
      [`gleaner_http_requests_total{method="POST", route="/v1/engine-search", status="500", ${T}}`]: '0 1x40',
      [`gleaner_http_requests_total{method="POST", route="/v1/engine-search", status="200", ${T}}`]: '0 1x40',
    },
    evalAt: '12m',
    firing: {},
  },
  {
    name: 'a circuit open for 30 minutes while calls are skipped fires; one open for 5 minutes, or one nobody calls, does not',
    series: {
      [`gleaner_upstream_circuit_open{upstream="google", ${T}}`]: '1x30',
      [`gleaner_upstream_calls_total{upstream="google", operation="search", verdict="suspended", ${T}}`]: '0+5x30',
      [`gleaner_upstream_circuit_open{upstream="brave", ${T}}`]: '1x5 0x25',
      [`gleaner_upstream_calls_total{upstream="brave", operation="search", verdict="suspended", ${T}}`]: '0+5x5 25x25',
      [`gleaner_upstream_calls_total{upstream="brave", operation="search", verdict="ok", ${T}}`]: '0x5 0+10x25',
      [`gleaner_upstream_circuit_open{upstream="solver", ${T}}`]: '1x30',
    },
    evalAt: '20m',
    firing: { GleanerUpstreamCircuitOpen: [{ upstream: 'google' }] },
  },
  {
    name: 'a parser that cannot read one answer in a hundred, for 45 minutes, drifted; one odd answer did not',
    series: {
      [`gleaner_upstream_calls_total{upstream="reddit", operation="listing", verdict="ok", ${T}}`]: '0+100x45',
      [`gleaner_upstream_calls_total{upstream="reddit", operation="listing", verdict="changed", ${T}}`]: '0+1x45',
      [`gleaner_upstream_calls_total{upstream="x", operation="TweetResultByRestId", verdict="ok", ${T}}`]: '0+50x45',
      [`gleaner_upstream_calls_total{upstream="x", operation="TweetResultByRestId", verdict="changed", ${T}}`]: '0 1x45',
    },
    evalAt: '45m',
    firing: { GleanerUpstreamParserDrift: [{ upstream: 'reddit', operation: 'listing' }] },
  },
  {
    name: 'half the answers are 500',
    series: {
      [`gleaner_http_requests_total{method="POST", route="/v1/pdf", status="500", ${T}}`]: '0+10x30',
      [`gleaner_http_requests_total{method="POST", route="/v1/pdf", status="200", ${T}}`]: '0+10x30',
    },
    evalAt: '20m',
    firing: { GleanerServerErrors: [{}] },
  },
  {
    name: 'an upstream whose calls take 10 to 30 s',
    series: {
      [`gleaner_upstream_duration_seconds_bucket{upstream="google", operation="search", le="10", ${T}}`]: '0x30',
      [`gleaner_upstream_duration_seconds_bucket{upstream="google", operation="search", le="30", ${T}}`]: '0+10x30',
      [`gleaner_upstream_duration_seconds_bucket{upstream="google", operation="search", le="+Inf", ${T}}`]: '0+10x30',
      [`gleaner_upstream_duration_seconds_count{upstream="google", operation="search", ${T}}`]: '0+10x30',
      [`gleaner_upstream_calls_total{upstream="google", operation="search", verdict="ok", ${T}}`]: '0+10x30',
    },
    evalAt: '30m',
    firing: { GleanerUpstreamSlow: [{ upstream: 'google' }] },
  },
  {
    name: 'an OCR queue five times its workers',
    series: { [`gleaner_pool_workers{pool="ocr", ${T}}`]: '2x20', [`gleaner_pool_queue_depth{pool="ocr", ${T}}`]: '10x20' },
    evalAt: '15m',
    firing: { GleanerPoolSaturated: [{ instance: 'a:9464', pool: 'ocr' }] },
  },
  {
    name: 'holds outstanding for half an hour without a billed request',
    series: {
      [`gleaner_credit_holds{${T}}`]: '3x40',
      [`gleaner_http_requests_total{method="POST", route="/v1/engine-search", status="200", ${T}}`]: '5x40',
    },
    evalAt: '30m',
    firing: { GleanerCreditHoldsStuck: [{}] },
  },
];

test('every alert has a scenario that fires it', () => {
  const fired = new Set(SCENARIOS.flatMap((s) => Object.keys(s.firing)));
  for (const rule of rules) assert.ok(fired.has(rule.alert), `no scenario of test/unit/alert-rules.test.ts fires ${rule.alert}: add one`);
  for (const name of fired) assert.ok(rules.some((r) => r.alert === name), `a scenario expects ${name}, which docs/operations.md does not define`);
});

/** An annotation as Prometheus renders it for these labels (only `{{ $labels.x }}` templates). */
function render(template: string, labels: Record<string, string>): string {
  const text = template.replace(/\{\{\s*\$labels\.(\w+)\s*\}\}/g, (_all, name: string) => labels[name] ?? '');
  assert.ok(!text.includes('{{'), `annotation "${template}" uses a template this test cannot render: extend render()`);
  return text;
}

/** promtool's unit-test file (JSON is YAML). */
function promtoolTests(ruleFile: string): string {
  return JSON.stringify(
    {
      rule_files: [ruleFile],
      evaluation_interval: '1m',
      tests: SCENARIOS.map((scenario) => ({
        name: scenario.name,
        interval: '1m',
        input_series: Object.entries(scenario.series).map(([series, values]) => ({ series, values })),
        alert_rule_test: rules.map((rule) => ({
          eval_time: scenario.evalAt,
          alertname: rule.alert,
          exp_alerts: (scenario.firing[rule.alert] ?? []).map((labels) => {
            const all = { ...labels, ...rule.labels };
            return { exp_labels: all, exp_annotations: Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, render(v, all)])) };
          }),
        })),
      })),
    },
    null,
    2,
  );
}

test('promtool: the rules are valid and fire on the scenarios, and only there', (t) => {
  const promtool = onPath('promtool');
  if (!promtool) {
    t.skip('promtool is not installed (Debian package prometheus)');
    return;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-alert-rules-'));
  try {
    writeFileSync(path.join(dir, 'rules.yml'), ruleFileOf(readFileSync(DOC, 'utf8')));
    writeFileSync(path.join(dir, 'tests.yml'), promtoolTests('rules.yml'));
    const run = (...args: string[]) => {
      const result = spawnSync(promtool, args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
      assert.equal(result.status, 0, `promtool ${args.join(' ')} failed:\n${result.stdout}${result.stderr}${result.error ?? ''}`);
    };
    run('check', 'rules', 'rules.yml');
    run('test', 'rules', 'tests.yml');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------
// The upstream series

test('upstream calls count by verdict; aborted and suspended calls stay out of the latency histogram', async () => {
  const metrics = new GleanerMetrics(SOURCES);
  metrics.upstream(call({ verdict: 'ok', durationMs: 250 }));
  metrics.upstream(call({ verdict: 'unreachable', durationMs: 1500, status: undefined }));
  metrics.upstream(call({ verdict: 'aborted', durationMs: 9000, status: undefined }));
  metrics.upstream(call({ verdict: 'suspended', durationMs: 0, status: undefined }));
  const text = await metrics.text();
  const labels = { upstream: 'bing', operation: 'search' };
  for (const verdict of ['ok', 'unreachable', 'aborted', 'suspended']) assert.equal(sample(text, 'gleaner_upstream_calls_total', { ...labels, verdict }), 1, verdict);
  assert.equal(sample(text, 'gleaner_upstream_duration_seconds_count', labels), 2);
  assert.equal(sample(text, 'gleaner_upstream_duration_seconds_sum', labels), 1.75);
  assert.equal(sample(text, 'gleaner_upstream_duration_seconds_bucket', { ...labels, le: '1' }), 1);
  assert.doesNotMatch(text, /adapter="/, 'the old label is gone');
});

test('the circuit gauge: 1 while open or half-open, 0 once closed, no series for an upstream never seen', async () => {
  const metrics = new GleanerMetrics(SOURCES);
  metrics.upstream(call());
  assert.equal(sample(await metrics.text(), 'gleaner_upstream_circuit_open'), undefined, 'no circuit event yet: no series');
  metrics.upstream(circuit('google', 'open'));
  assert.equal(sample(await metrics.text(), 'gleaner_upstream_circuit_open', { upstream: 'google' }), 1);
  metrics.upstream(circuit('google', 'half_open'));
  assert.equal(sample(await metrics.text(), 'gleaner_upstream_circuit_open', { upstream: 'google' }), 1);
  metrics.upstream(circuit('google', 'closed'));
  const text = await metrics.text();
  assert.equal(sample(text, 'gleaner_upstream_circuit_open', { upstream: 'google' }), 0);
  assert.equal(sample(text, 'gleaner_upstream_circuit_open', { upstream: 'bing' }), undefined);
});

test("the circuit gauge follows the breaker's shared state when given it (another replica's changes)", async () => {
  let states: Map<string, { openUntil: number }> | Error = new Map([['google', { openUntil: Date.now() + 60_000 }]]);
  const metrics = new GleanerMetrics({
    ...SOURCES,
    circuits: async () => {
      if (states instanceof Error) throw states;
      return states;
    },
  });
  assert.equal(sample(await metrics.text(), 'gleaner_upstream_circuit_open', { upstream: 'google' }), 1, 'opened elsewhere');
  metrics.upstream(circuit('bing', 'open'));
  states = new Map([['bing', { openUntil: 0 }]]);
  let text = await metrics.text();
  assert.equal(sample(text, 'gleaner_upstream_circuit_open', { upstream: 'google' }), 0, 'closed elsewhere');
  assert.equal(sample(text, 'gleaner_upstream_circuit_open', { upstream: 'bing' }), 0, 'closed elsewhere after this process saw it open');
  metrics.upstream(circuit('bing', 'open'));
  states = new Error('Redis is away');
  text = await metrics.text();
  assert.equal(sample(text, 'gleaner_upstream_circuit_open', { upstream: 'bing' }), 1, 'a store that fails leaves what the events said');
});
