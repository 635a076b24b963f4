// Writes deploy/prometheus/cnirec-prometheusrule.yaml from deploy/prometheus/cnirec-rules.yaml: the same rule
// groups as a PrometheusRule for the Prometheus Operator (a test fails when they drift).
// Run: node scripts/prometheus-rule.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import YAML from 'yaml';

const dir = new URL('../deploy/prometheus/', import.meta.url);
const rules = YAML.parse(readFileSync(new URL('cnirec-rules.yaml', dir), 'utf8'));
const rule = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'cnirec', namespace: 'cnirec', labels: { 'app.kubernetes.io/name': 'cnirec', 'app.kubernetes.io/component': 'alert-rules' } },
  spec: { groups: rules.groups },
};
const head = [
  '# The alert rules of cnirec-rules.yaml as a PrometheusRule for the Prometheus Operator: the same groups, written by',
  '# scripts/prometheus-rule.mjs (a test fails when they drift: edit cnirec-rules.yaml, then run the script). Your',
  "# Prometheus resource's ruleSelector must select these labels (many installs select `release: <name>`: add it here).",
  '# The README says how Prometheus scrapes the daemons.',
  '',
].join('\n');
writeFileSync(new URL('cnirec-prometheusrule.yaml', dir), head + YAML.stringify(rule, { lineWidth: 0 }));
