// Bundle size per entry point, as an app's bundler would ship it: `npm run build:sdk` output
// bundled by esbuild (from the repository's node_modules), minified, ES module, then gzipped.
// `node sdk/scripts/size.mjs [distDir]` (default sdk/dist; build first). Prints a Markdown table.
import { buildSync } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const sdk = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const esm = path.join(path.resolve(process.argv[2] ?? path.join(sdk, 'dist')), 'esm');

// What an app imports, by name: a bundler keeps only what these reach.
const cases = [
  ['`@flightrec/sdk`, everything (`import *`)', `import * as f from './index.js'; globalThis.f = f;`],
  [
    '`@flightrec/sdk`: `init`, `trackCustom`, `reportCrash`',
    `import { init, trackCustom, reportCrash } from './index.js'; globalThis.f = [init, trackCustom, reportCrash];`,
  ],
  [
    '`@flightrec/sdk/core`: `FlightrecClient`',
    `import { FlightrecClient } from './core.js'; globalThis.f = FlightrecClient;`,
  ],
  [
    '`@flightrec/sdk/browser`: `installAutoBreadcrumbs`',
    `import { installAutoBreadcrumbs } from './browser.js'; globalThis.f = installAutoBreadcrumbs;`,
  ],
  ['`@flightrec/sdk/node`: `nodeHooks`', `import { nodeHooks } from './node.js'; globalThis.f = nodeHooks;`],
  [
    'core client + browser auto-capture',
    `import { FlightrecClient } from './core.js'; import { installAutoBreadcrumbs } from './browser.js';
     globalThis.f = [FlightrecClient, installAutoBreadcrumbs];`,
  ],
];

console.log('| imported | minified | gzipped |\n|---|---:|---:|');
for (const [what, contents] of cases) {
  const r = buildSync({
    stdin: { contents, resolveDir: esm, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    write: false,
    logLevel: 'error',
  });
  const code = r.outputFiles[0].contents;
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`| ${what} | ${kb(code.byteLength)} | ${kb(zlib.gzipSync(code, { level: 9 }).byteLength)} |`);
}
