// Builds the SDK twice, as ES modules (dist/esm) and as CommonJS (dist/cjs), each with its .d.ts
// files. `node scripts/build.mjs [outDir]` (default: dist); the tests build into a temp dir.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(process.argv[2] ?? path.join(sdk, 'dist'));
// The compiler's own bin (typescript's "exports" do not list it): next to its package.json.
const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');

fs.rmSync(out, { recursive: true, force: true });
for (const [config, dir] of [
  ['tsconfig.build.json', 'esm'],
  ['tsconfig.cjs.json', 'cjs'],
]) {
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(sdk, config), '--outDir', path.join(out, dir)], {
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
// The package is "type": "module"; this marks dist/cjs as CommonJS for Node and TypeScript.
fs.writeFileSync(path.join(out, 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
