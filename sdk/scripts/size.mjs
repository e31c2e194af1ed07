// Bundle size per entry point, as an app's bundler ships it: the SDK built (scripts/build.mjs,
// into a temporary directory), bundled by esbuild (from the repository's node_modules: vite's)
// from what an app imports, minified, ES module, then gzipped (level 9).
//   node sdk/scripts/size.mjs           prints the Markdown table
//   node sdk/scripts/size.mjs --write   also puts it in docs/sdk.md, between the size markers
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { buildSync } from 'esbuild';

const sdk = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const docs = path.join(sdk, '..', 'docs', 'sdk.md');
const START = '<!-- size table: node sdk/scripts/size.mjs --write -->';
const END = '<!-- end of size table -->';

// What an app imports, by name: a bundler keeps only what these reach.
const three = 'init, trackCustom, reportCrash';
const cases = [
  ['`@flightrec/sdk`', 'everything (`import *`)', `import * as f from './index.js'; globalThis.f = f;`],
  ['`@flightrec/sdk`', `\`${three}\``, `import { ${three} } from './index.js'; globalThis.f = [${three}];`],
  ['`@flightrec/sdk/core`', 'everything (`import *`)', `import * as f from './core.js'; globalThis.f = f;`],
  ['`@flightrec/sdk/core`', `\`${three}\``, `import { ${three} } from './core.js'; globalThis.f = [${three}];`],
  [
    '`@flightrec/sdk/browser`',
    'browser auto-capture: `pageHandOff`, `installAutoBreadcrumbs`',
    `import * as f from './browser.js'; globalThis.f = f;`,
  ],
  [
    '`@flightrec/sdk/node`',
    'Node hooks: `nodeHooks`',
    `import { nodeHooks } from './node.js'; globalThis.f = nodeHooks;`,
  ],
  [
    'core + browser',
    `\`${three}\` + \`pageHandOff\` + \`installAutoBreadcrumbs\``,
    `import { ${three} } from './core.js'; import { pageHandOff, installAutoBreadcrumbs } from './browser.js';
     globalThis.f = [${three}, pageHandOff, installAutoBreadcrumbs];`,
  ],
  [
    'core + node',
    `\`${three}\` + \`nodeHooks\``,
    `import { ${three} } from './core.js'; import { nodeHooks } from './node.js'; globalThis.f = [${three}, nodeHooks];`,
  ],
];

/** Minified and gzipped bytes of what `contents` (an app's imports) pulls out of `esmDir`. */
export function bundleSize(esmDir, contents) {
  const r = buildSync({
    stdin: { contents, resolveDir: esmDir, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    write: false,
    logLevel: 'error',
  });
  const code = r.outputFiles[0].contents;
  return { raw: code.byteLength, gzip: zlib.gzipSync(code, { level: 9 }).byteLength };
}

function main() {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-sdk-size-'));
  try {
    const built = spawnSync(process.execPath, [path.join(sdk, 'scripts', 'build.mjs'), out], { stdio: 'inherit' });
    if (built.status !== 0) process.exit(built.status ?? 1);
    const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
    const rows = cases.map(([entry, what, contents]) => {
      const s = bundleSize(path.join(out, 'esm'), contents);
      return `| ${entry} | ${what} | ${kb(s.raw)} | ${kb(s.gzip)} |`;
    });
    const table = ['| entry | imported | minified | gzipped |', '|---|---|---:|---:|', ...rows].join('\n');
    console.log(table);
    if (process.argv.includes('--write')) {
      const text = fs.readFileSync(docs, 'utf8');
      const a = text.indexOf(START);
      const b = text.indexOf(END);
      if (a < 0 || b < a) throw new Error(`docs/sdk.md has no "${START}" … "${END}" markers`);
      fs.writeFileSync(docs, `${text.slice(0, a + START.length)}\n${table}\n${text.slice(b)}`);
      console.log('written to docs/sdk.md');
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
