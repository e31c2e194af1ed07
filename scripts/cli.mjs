// `npm run cli`: the prebuilt CLI (dist/cli.mjs), built first if missing or older than its
// sources, then run in this same process (one Node start, no TypeScript compile).
import { pathToFileURL } from 'node:url';
import { buildCli } from './build-cli.mjs';

await import(pathToFileURL(await buildCli({ ifStale: true })).href);
