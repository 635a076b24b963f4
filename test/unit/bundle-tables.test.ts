import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BUNDLE_TABLES, MIGRATIONS, migrate } from '../../store/index.js';
import { presentReport } from '../../api/index.js';
import { reportFromBody } from '../../daemon/bundle-doctor.js';
import { createLogRing } from '../../daemon/log-ring.js';
import { settingsView } from '../../daemon/settings-view.js';
import { loadConfig } from '../../daemon/config.js';
import type { DoctorReport } from '../../collector/index.js';

describe('what a bundle keeps of each table', () => {
  it('has a rule for every table of the schema, and none for a table it does not have', () => {
    const db = new BetterSqlite3(':memory:');
    migrate(db, ':memory:', MIGRATIONS);
    const tables = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    db.close();
    // A table a migration adds comes along whole until it gets its line in store/bundle/bundle-tables.ts: decide it there.
    expect(Object.keys(BUNDLE_TABLES).sort()).toEqual(tables);
  });
});

describe("the doctor's report a bundle carries", () => {
  it('reads back as the report it was presented from', () => {
    const report: DoctorReport = {
      ok: false,
      generatedAtMs: 1_763_750_000_123,
      runtimes: [],
      views: [
        {
          readBy: 'containerd',
          label: 'containerd',
          source: '/etc/containerd/config.toml',
          confDir: '/etc/cni/net.d',
          binDirs: ['/opt/cni/bin'],
          loader: 'containerd',
          maxConfNum: 1,
          defaultNetwork: null,
          confDirExists: true,
          files: [{ name: '10-a.conflist', path: '/etc/cni/net.d/10-a.conflist', status: 'loaded', why: '', network: 'a', cniVersion: '1.0.0', sizeBytes: 10, mtimeMs: 1_763_750_000_000, plugins: [] }],
          active: { file: '/etc/cni/net.d/10-a.conflist', network: 'a' },
          loadFailure: null,
        },
      ] as unknown as DoctorReport['views'],
      problems: [{ code: 'missing-plugin', severity: 'error', message: 'no bridge', path: '/etc/cni/net.d/10-a.conflist' }] as unknown as DoctorReport['problems'],
      record: { probedPlugins: 2, cniPaths: [{ value: '/opt/cni/bin', calls: 3, lastAtMs: 1_763_750_000_000 }] },
    };
    const body = presentReport(report, ['/etc/cni/net.d']);
    expect(presentReport(reportFromBody(body), ['/etc/cni/net.d'])).toEqual(body);
  });
});

describe("the daemon's last log lines", () => {
  it('keeps the newest lines, oldest first, however they are written', () => {
    const ring = createLogRing(3);
    ring.write('{"a":1}\n{"a":2}\n');
    ring.write('{"a":3}\n');
    ring.write('{"a":4}\n{"a":5}\n');
    expect(ring.lines()).toEqual(['{"a":3}', '{"a":4}', '{"a":5}']);
  });
});

describe("the daemon's settings in a bundle", () => {
  it('says whether a token is set but never the token, nor the password of a URL', () => {
    const view = settingsView(loadConfig({ token: 'sekrit-token', otlpEndpoint: 'http://user:pw-123@collector:4318', redactKeys: 'password,^key$' }, {}));
    expect(JSON.stringify(view)).not.toMatch(/sekrit-token|pw-123/);
    expect(view).toMatchObject({ token: '(set, not shown)', 'otlp-endpoint': 'http://user:[redacted]@collector:4318', 'redact-keys': ['password', '^key$'], listen: '127.0.0.1:7070' });
  });
});
