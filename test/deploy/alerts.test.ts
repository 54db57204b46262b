import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { startServer } from '../process.js';
import { installed } from '../../bench/load.js';
import { freePort, ROOT, sh, waitForHttp } from './tools.js';

// What operators page on (deploy/prometheus/rules.yaml) and look at (deploy/grafana/), run for
// real: promtool's own checks and unit tests, then a Prometheus scraping the admin port of a
// service under load, where every recording rule, every alert's quantity and every dashboard query
// returns data.

const missing = ['prometheus', 'promtool', 'wrk'].filter((tool) => !installed(tool));
if (missing.length > 0) process.stdout.write(`# SKIPPED: the alerting tests need ${missing.join(', ')} (scripts/ensure-deploy-tools.sh)\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const RULES = join(ROOT, 'deploy/prometheus/rules.yaml');

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
}
const groups = (parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }).groups;
const rules = groups.flatMap((group) => group.rules);
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/json-utility-service.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
};

describe('alerting rules and dashboard', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false, timeout: 180_000 }, () => {
  test('promtool checks the rules and passes their unit tests (each alert fires, and keeps quiet)', async () => {
    await sh('promtool', ['check', 'rules', RULES]);
    const tested = await sh('promtool', ['test', 'rules', 'rules.test.yaml'], { cwd: join(ROOT, 'deploy/prometheus') });
    assert.match(tested, /SUCCESS/);
    // Every alert has a case where it fires and one where it stays quiet.
    const unitTests = readFileSync(join(ROOT, 'deploy/prometheus/rules.test.yaml'), 'utf8');
    for (const { alert } of rules.filter((rule) => rule.alert !== undefined)) {
      assert.match(unitTests, new RegExp(`alertname: ${alert}\\s+eval_time: \\S+\\s+exp_alerts:\\s*\\n`), `${alert} fires in a test`);
      assert.match(unitTests, new RegExp(`alertname: ${alert}, eval_time: \\S+, exp_alerts: \\[\\] \\}`), `${alert} stays quiet in a test`);
    }
  });

  test("the PrometheusRule holds rules.yaml's groups (scripts/prometheus-rule.ts writes it)", () => {
    const rule = parse(readFileSync(join(ROOT, 'deploy/prometheus/prometheus-rule.yaml'), 'utf8')) as {
      apiVersion: string;
      kind: string;
      spec: { groups: unknown };
    };
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(rule.kind, 'PrometheusRule');
    assert.deepEqual(rule.spec.groups, groups);
  });

  test('a real Prometheus scraping a service under load: every rule and every dashboard query returns data', async (t) => {
    const adminPort = await freePort();
    const service = await startServer(t, { ADMIN_PORT: String(adminPort), DRAIN_DELAY_MS: '0' });
    // /metrics as Prometheus reads it: promtool finds nothing but prom-client's own gauges named *_total.
    const metrics = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    const checked = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let complaints = '';
    checked.stdout.on('data', (chunk: Buffer) => (complaints += chunk.toString()));
    checked.stderr.on('data', (chunk: Buffer) => (complaints += chunk.toString()));
    checked.stdin.end(metrics);
    await new Promise((resolve) => checked.on('exit', resolve));
    const lines = complaints.split('\n').filter(Boolean);
    for (const line of lines)
      assert.match(line, /^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/, line);

    const work = mkdtempSync(join(tmpdir(), 'prometheus-'));
    t.after(() => rmSync(work, { recursive: true, force: true }));
    const port = await freePort();
    writeFileSync(
      join(work, 'prometheus.yml'),
      `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [${JSON.stringify(RULES)}]
scrape_configs:
  - job_name: json-utility-service
    static_configs: [{ targets: ['127.0.0.1:${adminPort}'] }]
`,
    );
    const prometheus = spawn(
      'prometheus',
      [`--config.file=${join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${join(work, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let prometheusLog = '';
    prometheus.stderr.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
    t.after(() => prometheus.kill('SIGKILL'));
    await waitForHttp(`http://127.0.0.1:${port}/-/ready`);

    // Load of every kind: single calls, an error, a batch, while Prometheus scrapes every second.
    const wrk = spawn('wrk', ['-t1', '-c8', '-d12s', `${service.base}/api/isOdd/7`], { stdio: 'ignore' });
    for (let i = 0; i < 50; i++) {
      await fetch(`${service.base}/api/sort`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":[3,1,2]}' });
      await fetch(`${service.base}/api/isEven/x`);
      await fetch(`${service.base}/api/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"operations":[{"operation":"isEven","input":2}]}',
      });
    }
    await new Promise((resolve) => wrk.on('exit', resolve));
    await sleep(3000);

    const query = async (expr: string): Promise<unknown[]> => {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await response.json()) as { status: string; data?: { result: unknown[] }; error?: string };
      assert.equal(body.status, 'success', `${expr}: ${body.error}`);
      return body.data?.result ?? [];
    };
    const empty: string[] = [];
    for (const rule of rules) {
      // An alert's quantity is its expression without the threshold: healthy, the condition itself is empty.
      const expr = rule.record ?? rule.expr.replace(/\s*(>|==|<)\s*[\d.]+\s*$/, '');
      if ((await query(expr)).length === 0) empty.push(`${rule.record ?? rule.alert}: ${expr}`);
    }
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) if ((await query(target.expr)).length === 0) empty.push(`panel "${panel.title}": ${target.expr}`);
    }
    assert.deepEqual(empty, [], `queries that returned no data:\n${empty.join('\n')}\n${prometheusLog.slice(-2000)}`);
    // Healthy and under load: no alert is firing.
    assert.deepEqual(await query('ALERTS{alertstate="firing"}'), []);
  });
});
