/**
 * The alert rules of deploy/prometheus: valid for Prometheus (`promtool check rules`), each alert firing on
 * what it is about and quiet short of it with the summary it promises (`promtool test rules` of
 * test/prometheus/cnirec-rules.test.yaml), and the PrometheusRule holding the same groups as the plain file.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RULES = path.join(ROOT, 'deploy/prometheus/cnirec-rules.yaml');
const OPERATOR_RULE = path.join(ROOT, 'deploy/prometheus/cnirec-prometheusrule.yaml');
const PROMTOOL = process.env.CNIREC_PROMTOOL ?? '/usr/bin/promtool';

/** promtool is Debian's prometheus package (scripts/test.sh installs it): under CI its absence fails the tests. */
const promtoolProblem = existsSync(PROMTOOL) ? null : `no promtool at ${PROMTOOL}: apt-get install prometheus (scripts/test.sh does), or set CNIREC_PROMTOOL`;
if (promtoolProblem && !process.env.CI) console.warn(`skipping the promtool tests: ${promtoolProblem}`);

describe.runIf(promtoolProblem === null || process.env.CI)('the alert rules', () => {
  const promtool = (...args: string[]) => {
    if (promtoolProblem) throw new Error(promtoolProblem);
    const r = spawnSync(PROMTOOL, args, { cwd: path.join(ROOT, 'test/prometheus'), encoding: 'utf8' });
    return { code: r.status, output: `${r.stdout}${r.stderr}` };
  };

  it('are rules Prometheus loads', () => {
    const r = promtool('check', 'rules', RULES);
    expect(r.output).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });

  it('fire on what they are about, name the node, network or pod and the command to run there, and stay quiet short of it', () => {
    const r = promtool('test', 'rules', 'cnirec-rules.test.yaml');
    expect(r.code, r.output).toBe(0);
  });

  it('are the same groups in the PrometheusRule for the Prometheus Operator', () => {
    const plain = YAML.parse(readFileSync(RULES, 'utf8')) as { groups: unknown };
    const operator = YAML.parse(readFileSync(OPERATOR_RULE, 'utf8')) as { apiVersion: string; kind: string; spec: { groups: unknown } };
    expect(operator).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' });
    // scripts/prometheus-rule.mjs writes it: run it after changing cnirec-rules.yaml.
    expect(operator.spec.groups).toEqual(plain.groups);
  });

  it('name every alert the README lists, and the README every alert', () => {
    const plain = YAML.parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string }[] }[] };
    const alerts = plain.groups.flatMap((g) => g.rules.map((r) => r.alert)).sort();
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const listed = [...readme.matchAll(/^\| `(C\w+)` \|/gm)].map((m) => m[1]!).filter((a) => alerts.includes(a) || /^(CNI|Cnirec)/.test(a)).sort();
    expect(listed).toEqual(alerts);
  });
});
