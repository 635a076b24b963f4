// Bundles the web view (ui/) into dist/ui/: one script and one stylesheet with content-hashed names,
// and index.html naming them. No inline script or style anywhere: the daemon serves these files under a
// Content-Security-Policy that forbids both (api/routes/ui.ts). Run by `npm run build`.
import { build } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'ui');
/** The whole web view, gzipped, stays under this: it must load fast over a node's own port. */
const BUDGET_GZIP_BYTES = 150 * 1024;

await rm(out, { recursive: true, force: true });
await mkdir(path.join(out, 'assets'), { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: { app: 'ui/main.tsx', style: 'ui/style.css' },
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: ['chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: 'ui/tsconfig.json',
  outdir: path.join(out, 'assets'),
  entryNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs).map(([file, meta]) => ({ file: path.resolve(root, file), entry: meta.entryPoint }));
const href = (entry) => {
  const found = outputs.find((o) => o.entry === entry);
  if (!found) throw new Error(`build-ui: no output for ${entry}`);
  return `/ui/assets/${path.basename(found.file)}`;
};

const template = await readFile(path.join(root, 'ui', 'index.html'), 'utf8');
const html = template.replace('%STYLE%', href('ui/style.css')).replace('%SCRIPT%', href('ui/main.tsx'));
await writeFile(path.join(out, 'index.html'), html);

let gzipped = gzipSync(html).length;
for (const { file } of outputs) gzipped += gzipSync(await readFile(file)).length;
if (gzipped > BUDGET_GZIP_BYTES) throw new Error(`build-ui: the web view is ${Math.round(gzipped / 1024)} KiB gzipped, over its ${BUDGET_GZIP_BYTES / 1024} KiB budget`);
console.log(`build-ui: dist/ui (${(gzipped / 1024).toFixed(1)} KiB gzipped)`);
