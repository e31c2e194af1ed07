// Builds the CLI (src/cli/main.ts) into one plain JavaScript file, dist/cli.mjs, with esbuild
// (installed with tsx): the CLI then starts Node on JavaScript, with no TypeScript compile at run
// time (docs/decisions.md, "A prebuilt CLI"). `npm run cli` (scripts/cli.mjs) calls buildCli with
// ifStale first: it rebuilds only when a source file the bundle was made from changed since.
//   node scripts/build-cli.mjs [--out dist/cli.mjs]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT = path.join(root, 'dist/cli.mjs');

/** Whether `out` is missing or older than a source file it was built from (listed beside it). */
function stale(out) {
  let built;
  try {
    built = fs.statSync(out).mtimeMs;
    const inputs = JSON.parse(fs.readFileSync(`${out}.inputs.json`, 'utf8'));
    return inputs.some((f) => fs.statSync(path.resolve(root, f)).mtimeMs > built);
  } catch {
    return true;
  }
}

export async function buildCli({ out = DEFAULT_OUT, ifStale = false } = {}) {
  if (ifStale && !stale(out)) return out;
  const esbuild = await import('esbuild');
  const r = await esbuild.build({
    entryPoints: [path.join(root, 'src/cli/main.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    metafile: true,
    logLevel: 'warning',
    absWorkingDir: root,
    banner: { js: '// Built from src/cli/main.ts by scripts/build-cli.mjs: edit the source, not this file.' },
  });
  fs.writeFileSync(`${out}.inputs.json`, JSON.stringify(Object.keys(r.metafile.inputs)));
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--out');
  await buildCli({ out: i >= 0 ? path.resolve(process.argv[i + 1]) : DEFAULT_OUT });
}
