/**
 * SQL is always parameterised: a static check of store/*.ts. Every template
 * literal that builds SQL may interpolate only the fragments listed here
 * (column lists, fixed conditions, numeric constants), each with the reason
 * it is no client value; everything else a query needs travels as a `?` or
 * `@name` parameter. A new interpolation fails this test until it is
 * reviewed and listed; a listed one that disappears fails it too, so the
 * list cannot rot. The fragment arrays that WHERE clauses are joined from
 * may only receive fixed text. The API fuzz test (fuzz-api.test.ts) shows
 * the same from the outside: injection strings find exactly nothing.
 */

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const STORE_DIR = fileURLToPath(new URL('../../store/', import.meta.url));

/** file → interpolated expression → why it is no client value. */
const ALLOWED_FRAGMENTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'cache-findings.ts': {
    FILE_KINDS_SQL: 'the fixed list of file-problem kinds, quoted once at load',
    k: 'a kind from the constant FILE_PROBLEM_KINDS',
  },
  'cache-links.ts': {
    NETWORK_OF_STDIN: 'a constant SQL expression',
    SAME_NETWORK: 'a constant SQL expression',
    TOP_LEVEL: 'a constant SQL condition',
    SLACK_US: 'a numeric constant',
    COARSE_MTIME_US: 'a numeric constant',
    DEL_SUCCEEDED_AFTER: 'a constant SQL subquery over the outer call c',
  },
  'cache-writer.ts': {
    FILE_KINDS_SQL: 'the fixed list of file-problem kinds, quoted once at load',
  },
  'cache-reader.ts': {
    MAX_CACHE_PAGE: 'a numeric constant',
    "where.join(' AND ')": 'fixed conditions with @named parameters (checked below)',
    "where.length ? `WHERE ${where.join(' AND ')}` : ''": 'the same, with WHERE',
  },
  'call-lookups.ts': {
    HEAD_BYTES: 'a numeric constant',
  },
  'findings-reader.ts': {
    COLUMNS: 'a constant column list',
    SEVERITY_RANK_SQL: 'a CASE built at load from the constant severity table',
    GROUPS_SQL: 'a constant query over the findings log, its filters bound to @named parameters',
    kind: 'a kind from the constant FINDING_SEVERITY table',
    'severityRankOf(severity)': 'a number from the constant FINDING_SEVERITIES list',
  },
  'call-loops.ts': {
    TOP_LEVEL_FAILED: 'a constant SQL condition, its time bound to @sinceUs',
    FAILURE_COLUMNS: 'a constant column list',
  },
  'call-decode.ts': {
    "SUMMARY_NAMES.join(', ')": 'the constant SUMMARY_COLUMNS names',
    inner: 'a SELECT its callers in store/ write as a checked template (pod-calls.ts)',
  },
  'call-filter-sql.ts': {
    column: 'a column name from the constant EQUALS table',
  },
  'call-reader.ts': {
    FULL_COLUMNS: 'a constant column list',
    HELPER_SELECT_COLUMNS: 'a constant column list',
    SUMMARY_COLUMNS: 'a constant column list',
    "conditions.join(' AND ')": 'fixed conditions with ? parameters (checked below)',
    where: 'the WHERE clause built from those conditions',
  },
  'call-writer.ts': {
    'FINISH_COLUMNS.map((c) => `${c} = ?`).join(\', \')': 'constant column names, each bound to ?',
    'IDENTITY_COLUMNS.map((c) => `${c} = ?`).join(\', \')': 'constant column names, each bound to ?',
    c: 'a column name from the constant FINISH_COLUMNS or IDENTITY_COLUMNS',
    'names(CALL_COLUMNS)': 'constant column names',
    'names(HELPER_COLUMNS)': 'constant column names',
    'params(CALL_COLUMNS)': 'one ? per constant column',
    'params(HELPER_COLUMNS)': 'one ? per constant column',
  },
  'export-schema.ts': {
    NOW_US: 'a constant SQL expression for the current time',
  },
  'export-outbox.ts': {
    't.name': 'a trigger name from the constant EXPORT_TRIGGERS table',
  },
  'migrations.ts': {
    APPLICATION_ID: 'a numeric constant',
    'm.version': 'a migration number from the constant MIGRATIONS table',
  },
  'pod-calls.ts': {
    SUMMARY_COLUMNS: 'a constant column list',
    HELPER_SUMMARY_COLUMNS: 'a constant column list',
    'MAX_POD_CALLS + 1': 'a numeric constant',
  },
  'retention-prune.ts': {
    TREE: 'a constant recursive CTE, its root bound to ?',
    IS_ROOT: 'a constant SQL condition over the outer call c',
    IN_TIMELINE: 'a constant SQL subquery over the outer call c',
  },
  'retention-vacuum.ts': {
    n: 'a page count the pruner computed (pragmas take no bound parameters)',
    busyTimeout: 'the number SQLite itself returned for busy_timeout',
  },
  'retention.ts': {
    pages: 'a page count computed from the size limit',
    budget: 'a byte count computed from the size limit',
  },
  'conf-history.ts': {
    COLUMNS: 'a constant column list',
  },
  'config-failures.ts': {
    ERROR_MSG: 'a constant SQL expression',
    NETWORK: 'a constant SQL expression',
  },
  'plugin-binaries.ts': {
    COLUMNS: 'a constant column list',
    PROBE: 'constant SQL columns (the latest VERSION probe)',
    PROBE_JOIN: 'a constant join, its binary bound by the outer row',
  },
  'bundle-selection.ts': {
    IN_WINDOW: 'a constant SQL condition, its window bound to @sinceUs/@untilUs',
    SLICE_ROWS: 'a numeric constant',
  },
  'bundle-tables.ts': {
    "overlaps('first_seen_ms', 'coalesce(superseded_at_ms, removed_at_ms)')": 'a constant condition over constant column names, its window bound to :sinceMs/:untilMs',
    "overlaps('first_seen_ms', 'gone_at_ms')": 'a constant condition over constant column names, its window bound to :sinceMs/:untilMs',
    CONTAINER: 'a constant SQL condition over the selection\'s temporary table',
    POD: 'a constant SQL condition over the selection\'s temporary table',
  },
  'snapshot.ts': {
    PAGE_SIZE_BYTES: 'a numeric constant',
    APPLICATION_ID: 'a numeric constant',
    schemaVersion: 'the number SQLite returned for the source\'s user_version',
    select: 'column names the source\'s own pragma_table_info gave, each quoted, or the constant payload CASE of BUNDLE_TABLES',
    'quote(table)': 'a table name from the source\'s own sqlite_schema, quoted',
    "rule?.rows ?? '1'": 'a condition from the constant BUNDLE_TABLES, its values bound to :named parameters',
    "columns.map(quote).join(', ')": 'column names the source\'s own pragma_table_info gave, each quoted',
    "columns.map(() => '?').join(', ')": 'one ? per column',
  },
  'open-database.ts': {
    BUSY_TIMEOUT_MS: 'a numeric constant',
    JOURNAL_SIZE_LIMIT_BYTES: 'a numeric constant',
    PAGE_SIZE_BYTES: 'a numeric constant',
    READ_CACHE_KIB: 'a numeric constant',
  },
};

/** Arrays WHERE clauses are joined from: what may be pushed onto them. */
const FRAGMENT_ARRAYS: Readonly<Record<string, readonly string[]>> = {
  'cache-reader.ts': ['where'],
  'call-filter-sql.ts': ['conditions'],
  'call-reader.ts': ['conditions'],
};
/** Pushed values that are not literals, and why they are fixed text. */
const ALLOWED_PUSHES: Readonly<Record<string, string>> = {
  '`${column} = ?`': 'a constant column bound to ?',
  "filter.failed ? 'ok = 0' : 'ok = 1'": 'one of two fixed conditions',
  fixed: 'a value of the constant STATUS_CONDITION table',
};

/** Identifiers passed to prepare/exec that hold whole statements; each is checked where it is built. */
const STATEMENT_NAMES = new Set(['sql', 'DELETE_HELPERS', 'INSERT_FINISHED', 'INSERT_HELPER', 'INSERT_STARTED', 'MARK_INCOMPLETE', 'UPDATE_FINISHED', 'UPDATE_IDENTITY', 'CREATE_CALLS', 'CREATE_HELPERS', 'CREATE_TRACER_EVENTS', 'CREATE_CACHE_ENTRIES', 'CREATE_IP_HISTORY', 'CREATE_CACHE_FINDINGS', 'TREE_INFO', 'DELETE_TREE', 'HISTORY_SQL[t]', 'POD_GRAPH_SQL.podCalls', 'POD_GRAPH_SQL.podCallsOfUid', 'POD_GRAPH_SQL.childIds', 'POD_GRAPH_SQL.byIds', 'POD_GRAPH_SQL.helpers', 'CALL_LOOP_SQL.delLoops', 'CALL_LOOP_SQL.addLoops', 'CALL_LOOP_SQL.lastDelFailure', 'CALL_LOOP_SQL.lastAddFailure', 'CREATE_CONF_VERSIONS', 'CREATE_PLUGIN_BINARIES', 'CREATE_CALL_BINARIES', 'CONFIG_FAILURE_SQL.adds', 'CREATE_EXPORT_OUTBOX', 'CREATE_EXPORT_WATERMARKS', 'CREATE_READINESS', 'CREATE_READINESS_TRANSITIONS', 'CREATE_RUNTIME_TRANSITIONS', 'CREATE_RUNTIME_SANDBOXES', 'GC_DEL_SQL', 'CREATE_CALL_UPDATES', 'CREATE_CALL_UPDATES_INDEX', 'STATUS_OF', 'INSERT_UPDATE', 't.sql', 's.sql', 'RETENTION_CALL_SQL.firstStatusNetwork', 'RETENTION_CALL_SQL.nextStatusNetwork', 'RETENTION_CALL_SQL.statusOverflow', 'RETENTION_CALL_SQL.statusThrough']);

const SQL_WORDS = /\b(SELECT|INSERT|UPDATE|DELETE|WHERE|VALUES|PRAGMA|CREATE|ORDER BY|LIMIT|SET|IN)\b/;
const SINKS = new Set(['prepare', 'exec', 'pragma']);

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

function isSink(node: ts.Node): boolean {
  const call = node.parent;
  return (
    call !== undefined &&
    ts.isCallExpression(call) &&
    call.arguments[0] === node &&
    ts.isPropertyAccessExpression(call.expression) &&
    SINKS.has(call.expression.name.text)
  );
}

function staticText(t: ts.TemplateExpression): string {
  return t.head.text + t.templateSpans.map((s) => ` ${s.literal.text}`).join('');
}

/** A template is SQL when it reads like SQL, carries parameters, quotes an interpolation, or goes to a sink. */
function looksLikeSql(t: ts.TemplateExpression): boolean {
  const text = staticText(t);
  const quoted = t.templateSpans.some((s, i) => (i === 0 ? t.head.text : t.templateSpans[i - 1]!.literal.text).endsWith("'"));
  return SQL_WORDS.test(text) || /[?@]/.test(text) || quoted || isSink(t);
}

function scan(file: string): { interpolations: Finding[]; pushes: Finding[]; sinks: Finding[] } {
  const text = fs.readFileSync(path.join(STORE_DIR, filePaths.get(file) ?? file), 'utf8');
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (n: ts.Node) => src.getLineAndCharacterOfPosition(n.getStart()).line + 1;
  const out = { interpolations: [] as Finding[], pushes: [] as Finding[], sinks: [] as Finding[] };
  const arrays = new Set(FRAGMENT_ARRAYS[file] ?? []);
  const visit = (n: ts.Node) => {
    if (ts.isTemplateExpression(n) && looksLikeSql(n)) {
      for (const span of n.templateSpans) out.interpolations.push({ file, line: lineOf(span), what: span.expression.getText() });
    }
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
      const target = n.expression.expression.getText();
      const method = n.expression.name.text;
      if (method === 'push' && arrays.has(target)) {
        for (const arg of n.arguments) if (!ts.isStringLiteral(arg)) out.pushes.push({ file, line: lineOf(arg), what: arg.getText() });
      }
      const arg = n.arguments[0];
      if (SINKS.has(method) && arg !== undefined && !ts.isStringLiteral(arg) && !ts.isNoSubstitutionTemplateLiteral(arg) && !ts.isTemplateExpression(arg)) {
        out.sinks.push({ file, line: lineOf(arg), what: arg.getText() });
      }
    }
    // `'...' + value` building SQL would slip past the template check.
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const literal = [n.left, n.right].find((s) => ts.isStringLiteral(s) || ts.isNoSubstitutionTemplateLiteral(s));
      if (literal && SQL_WORDS.test(literal.getText())) out.interpolations.push({ file, line: lineOf(n), what: `+ ${n.getText()}` });
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

// Named by file name (unique across store/'s subfolders), read from wherever it lives.
const filePaths = new Map(
  fs.readdirSync(STORE_DIR, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => [path.basename(f), f] as const),
);
const files = [...filePaths.keys()];
const scans = files.map(scan);
const at = (f: Finding) => `${f.file}:${f.line} ${f.what}`;

describe('SQL in store/*.ts', () => {
  it('interpolates only reviewed constant fragments, never a value', () => {
    const unreviewed = scans.flatMap((s) => s.interpolations).filter((f) => ALLOWED_FRAGMENTS[f.file]?.[f.what] === undefined);
    expect(unreviewed.map(at)).toEqual([]);
  });

  it('every reviewed fragment is still there (the list does not rot)', () => {
    const seen = new Set(scans.flatMap((s) => s.interpolations).map((f) => `${f.file} ${f.what}`));
    const stale = Object.entries(ALLOWED_FRAGMENTS).flatMap(([file, fragments]) => Object.keys(fragments).map((what) => `${file} ${what}`)).filter((k) => !seen.has(k));
    expect(stale).toEqual([]);
  });

  it('builds WHERE clauses only from fixed conditions', () => {
    const pushes = scans.flatMap((s) => s.pushes).filter((f) => ALLOWED_PUSHES[f.what] === undefined);
    expect(pushes.map(at)).toEqual([]);
  });

  it('hands prepare/exec/pragma only literals, checked templates or named statements', () => {
    const unknown = scans.flatMap((s) => s.sinks).filter((f) => !STATEMENT_NAMES.has(f.what));
    expect(unknown.map(at)).toEqual([]);
  });

  it('catches an interpolated value (the check itself works)', () => {
    const probe = ts.createSourceFile('probe.ts', 'db.prepare(`SELECT * FROM calls WHERE pod_name = \'${name}\'`);', ts.ScriptTarget.Latest, true);
    const templates: ts.TemplateExpression[] = [];
    const visit = (n: ts.Node) => {
      if (ts.isTemplateExpression(n)) templates.push(n);
      ts.forEachChild(n, visit);
    };
    visit(probe);
    expect(templates.map(looksLikeSql)).toEqual([true]);
  });
});
