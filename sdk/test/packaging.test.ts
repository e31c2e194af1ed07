// The package as an app installs it: built by the SDK's own build script (ES modules and
// CommonJS, each with its .d.ts), laid out as node_modules/@flightrec/sdk, then loaded with
// require() and import, and type-checked from a CommonJS and an ES module TypeScript file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const sdkDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let app: string;
let pkg: string;

function run(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

beforeAll(() => {
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-sdk-app-'));
  pkg = path.join(app, 'node_modules', '@flightrec', 'sdk');
  const built = run(process.execPath, [path.join(sdkDir, 'scripts/build.mjs'), path.join(pkg, 'dist')], sdkDir);
  expect(built.code, built.out).toBe(0);
  fs.copyFileSync(path.join(sdkDir, 'package.json'), path.join(pkg, 'package.json'));
}, 60_000);
afterAll(() => {
  if (app) fs.rmSync(app, { recursive: true, force: true });
});

describe('the built package', () => {
  it('require() gets the CommonJS build and import the ES module build, with the same API', () => {
    const script = `
      const cjs = require('@flightrec/sdk');
      const t = require('@flightrec/sdk/transport');
      import('@flightrec/sdk').then((esm) => {
        const c = new cjs.FlightrecClient({ apiKey: 'frk_x', endpoint: 'http://127.0.0.1:9', captureCrashes: false, flushOnExit: false });
        console.log(JSON.stringify({
          cjs: typeof cjs.FlightrecClient, esm: typeof esm.FlightrecClient, init: typeof cjs.init, classify: t.classifyStatus(429),
          sameNames: Object.keys(cjs).filter((k) => k !== 'default' && k !== '__esModule').sort().join() === Object.keys(esm).filter((k) => k !== 'default').sort().join(),
          cjsFile: require.resolve('@flightrec/sdk').includes('/dist/cjs/'), session: c.startSession().length,
        }));
        return c.shutdown({ timeoutMs: 0 });
      });`;
    const r = run(process.execPath, ['-e', script], app);
    expect(r.code, r.out).toBe(0);
    expect(JSON.parse(r.out.trim().split('\n').at(-1)!)).toEqual({
      cjs: 'function',
      esm: 'function',
      init: 'function',
      classify: 'retry',
      sameNames: true,
      cjsFile: true,
      session: 36,
    });
  });

  it('the entry points core, browser and node load with require() and import, named exports only', () => {
    const script = `
      const names = (m) => Object.keys(m).filter((k) => k !== 'default' && k !== '__esModule').sort().join();
      const out = {};
      Promise.all(['core', 'browser', 'node'].map(async (e) => {
        const cjs = require('@flightrec/sdk/' + e);
        const esm = await import('@flightrec/sdk/' + e);
        out[e] = names(cjs) === names(esm) ? names(esm) : 'differ';
      })).then(() => {
        const { FlightrecClient } = require('@flightrec/sdk/core');
        const { nodeHooks } = require('@flightrec/sdk/node');
        const opts = { apiKey: 'frk_x', endpoint: 'http://127.0.0.1:9', captureCrashes: false, flushOnExit: false };
        const c = new FlightrecClient(opts, { node: nodeHooks });
        out.session = c.startSession().length;
        console.log(JSON.stringify(out));
        return c.shutdown({ timeoutMs: 0 });
      });`;
    const r = run(process.execPath, ['-e', script], app);
    expect(r.code, r.out).toBe(0);
    const got = JSON.parse(r.out.trim().split('\n').at(-1)!) as Record<string, string | number>;
    expect(got.browser).toBe('installAutoBreadcrumbs,pageHandOff');
    const core = ['FlightrecClient', 'init', 'trackCustom', 'reportCrash', 'shutdown', 'keyValuePersistence'];
    expect(String(got.core).split(',')).toEqual(expect.arrayContaining(core));
    const node = ['nodeHooks', 'onNodeExit', 'onNodeCrash', 'nodeFetch'];
    expect(String(got.node).split(',')).toEqual(expect.arrayContaining(node));
    expect(got.session).toBe(36);
  });

  it('tree-shakes: no module runs code when imported, and core leaves the optional parts out', async () => {
    const { buildSync } = await import('esbuild');
    const esm = path.join(pkg, 'dist', 'esm');
    // ignoreAnnotations: "sideEffects": false is not taken on trust, the code is looked at.
    const bundle = (contents: string, ignoreAnnotations = false) =>
      buildSync({
        stdin: { contents, resolveDir: esm, loader: 'js' },
        bundle: true,
        minify: true,
        format: 'esm',
        write: false,
        logLevel: 'error',
        ignoreAnnotations,
      }).outputFiles[0]?.text ?? '';
    for (const f of fs.readdirSync(esm).filter((n) => n.endsWith('.js'))) {
      expect(bundle(`import './${f}';`, true).trim(), `${f} has top-level side effects`).toBe('');
    }
    const three = 'init, trackCustom, reportCrash';
    const all = bundle(`import * as f from './index.js'; globalThis.f = f;`);
    const core = bundle(`import * as f from './core.js'; globalThis.f = f;`);
    const named = bundle(`import { ${three} } from './core.js'; globalThis.f = [${three}];`);
    expect(named.length).toBeLessThan(core.length);
    expect(named.length).toBeLessThan(all.length * 0.85);
    // One string of each optional part: the page hand-off, Node's exit hooks, automatic breadcrumbs.
    for (const marker of ['flightrec.unsent.', 'SIGTERM', 'ui.click']) {
      expect(all, marker).toContain(marker);
      expect(named, marker).not.toContain(marker);
    }
  });

  it('the .d.ts files import files that exist in the package (no ./client.ts)', () => {
    for (const dir of ['esm', 'cjs']) {
      for (const f of fs.readdirSync(path.join(pkg, 'dist', dir)).filter((n) => n.endsWith('.d.ts'))) {
        const text = fs.readFileSync(path.join(pkg, 'dist', dir, f), 'utf8');
        for (const m of text.matchAll(/from '(\.[^']+)'/g)) {
          expect(m[1], `${dir}/${f}`).toMatch(/\.js$/);
          expect(
            fs.existsSync(path.join(pkg, 'dist', dir, m[1]!.replace(/\.js$/, '.d.ts'))),
            `${dir}/${f} → ${m[1]}`,
          ).toBe(true);
        }
      }
    }
  });

  it('type-checks from a CommonJS TypeScript file (no TS1479) and from an ES module one', () => {
    fs.writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2022', 'dom'],
          strict: true,
          noEmit: true,
          types: [],
          skipLibCheck: false,
        },
        files: ['app.cts', 'app.mts'],
      }),
    );
    const use = `
      import { FlightrecClient, init, type FlightrecOptions } from '@flightrec/sdk';
      import { classifyStatus } from '@flightrec/sdk/transport';
      const opts: FlightrecOptions = { apiKey: 'frk_x', endpoint: 'https://t.example', scrubQueryParams: (d) => d.filter((n) => n !== 'code') };
      const c: FlightrecClient = init(opts);
      const n: number | undefined = c.trackTap({ x: 1, y: 2 });
      export const s: string = classifyStatus(200) + String(n);
    `;
    fs.writeFileSync(path.join(app, 'app.cts'), use);
    fs.writeFileSync(path.join(app, 'app.mts'), use);
    const tsc = path.join(
      path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
      'bin',
      'tsc',
    );
    const r = run(process.execPath, [tsc, '-p', app], app);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  }, 60_000);
});
