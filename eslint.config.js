import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers, in the order data flows (ARCHITECTURE.md): a layer imports only the layers before it, and
 * a folder with an index.ts only through that index.ts, its public surface. test/ and bench/ may reach
 * anything: they test and measure the insides.
 */
export const LAYERS = ['lib', 'bpf', 'collector', 'store', 'otel', 'api', 'daemon', 'cli'];
/** Folders inside a layer with a public surface of their own (an index.ts), which siblings go through. */
export const INNER = {
  collector: ['assemble', 'cache', 'capture', 'changes', 'node-setup', 'runtime'],
  store: ['db', 'calls', 'cache', 'findings', 'retention', 'tracer-events', 'node-setup', 'export', 'bundle', 'runtime'],
};

const FLOW = LAYERS.join(' → ');

function restrictions(layer, inner) {
  const at = LAYERS.indexOf(layer);
  const patterns = [
    ...LAYERS.slice(at + 1).map((later) => ({
      group: [`**/${later}/**`],
      message: `${layer}/ must not import ${later}/: data flows ${FLOW}, so a layer imports only the layers before it.`,
    })),
    ...LAYERS.slice(0, at).map((earlier) => ({
      group: [`**/${earlier}/**`, `!**/${earlier}/index.js`],
      message: `import ${earlier}/ through ${earlier}/index.ts, its public surface; export what you need there.`,
    })),
    ...(INNER[layer] ?? [])
      .filter((sibling) => sibling !== inner)
      .map((sibling) => ({
        group: [`../${sibling}/**`, `!../${sibling}/index.js`],
        message: `import ${layer}/${sibling}/ through ${layer}/${sibling}/index.ts, its public surface.`,
      })),
  ];
  return { 'no-restricted-imports': ['error', { patterns }] };
}

/** One config object per layer (and per inner folder): flat config replaces a rule's options, it does not merge them. */
const layerConfigs = LAYERS.flatMap((layer) => [
  { files: [`${layer}/**/*.ts`], rules: restrictions(layer, null) },
  ...(INNER[layer] ?? []).map((inner) => ({ files: [`${layer}/${inner}/**/*.ts`], rules: restrictions(layer, inner) })),
]);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  ...layerConfigs,
  {
    // The web view runs in a browser: it knows nothing of the server's modules but the API's contract
    // types (type-only, through api/index.ts: nothing of the server reaches the bundle).
    files: ['ui/**/*.ts', 'ui/**/*.tsx'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...LAYERS.map((layer) => `**/${layer}/**`), '!**/api/index.js', 'node:*'],
              message: 'ui/ runs in the browser: it imports only its own files, and the API contract types from api/index.ts (import type).',
            },
            { group: ['**/api/index.js'], allowTypeImports: true, message: 'ui/ may take only types from api/index.ts (import type).' },
          ],
        },
      ],
    },
  },
  {
    files: ['bin/**/*.js', 'scripts/**/*.mjs', 'eslint.config.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
