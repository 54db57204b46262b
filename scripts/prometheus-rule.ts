/**
 * Writes deploy/prometheus/prometheus-rule.yaml, the Prometheus Operator's PrometheusRule, from the
 * plain rules file deploy/prometheus/rules.yaml: one source for both. `npx tsx scripts/prometheus-rule.ts`;
 * test/deploy/alerts.test.ts fails when the two differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';

const root = new URL('..', import.meta.url);
const { groups } = parse(readFileSync(new URL('deploy/prometheus/rules.yaml', root), 'utf8')) as { groups: unknown[] };
const rule = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'json-utility-service', labels: { 'app.kubernetes.io/name': 'json-utility-service' } },
  spec: { groups },
};
writeFileSync(
  new URL('deploy/prometheus/prometheus-rule.yaml', root),
  `# Generated from rules.yaml by scripts/prometheus-rule.ts: edit rules.yaml, then run it.\n${stringify(rule, { lineWidth: 0 })}`,
);
