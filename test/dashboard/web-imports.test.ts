import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The dashboard has no bundler to catch an import circle: a module that imports app.js runs
// before app.js has defined what it exports. The layering that rules a circle out: app.js
// imports views/ and lib/, views/ import lib/ only, lib/ imports lib/ only.
const WEB = path.resolve('web');

function jsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? jsFiles(full) : e.name.endsWith('.js') ? [full] : [];
  });
}

const rel = (file: string) => path.relative(WEB, file).split(path.sep).join('/');

/** Every static, re-exporting and dynamic import of a module, as web-relative paths. */
function importsOf(file: string): string[] {
  const src = fs.readFileSync(file, 'utf8');
  const specs = [
    ...src.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]/gm),
    ...src.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
    ...src.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specs.map((spec) => {
    expect(spec, `${rel(file)} imports ${spec}: only relative imports exist without a bundler`).toMatch(/^\.\.?\//);
    const target = path.resolve(path.dirname(file), spec);
    expect(fs.existsSync(target), `${rel(file)} imports ${spec}, which does not exist`).toBe(true);
    return rel(target);
  });
}

const graph = new Map(jsFiles(WEB).map((f) => [rel(f), importsOf(f)]));

describe('web/ imports', () => {
  it('finds the modules and their imports', () => {
    expect(graph.get('app.js')).toContain('lib/router.js');
    expect(graph.get('views/sessions.js')).toContain('lib/widgets.js');
  });

  it('has no circle', () => {
    const done = new Set<string>();
    const cycles: string[] = [];
    const visit = (mod: string, trail: string[]) => {
      if (trail.includes(mod)) {
        cycles.push([...trail.slice(trail.indexOf(mod)), mod].join(' → '));
        return;
      }
      if (done.has(mod)) return;
      for (const next of graph.get(mod) ?? []) visit(next, [...trail, mod]);
      done.add(mod);
    };
    for (const mod of graph.keys()) visit(mod, []);
    expect(cycles).toEqual([]);
  });

  it('keeps its layers: nothing imports app.js, views/ import lib/ only, lib/ imports lib/ only', () => {
    const wrong: string[] = [];
    for (const [mod, deps] of graph) {
      for (const dep of deps) {
        const ok = dep !== 'app.js' && (mod === 'app.js' || dep.startsWith('lib/'));
        if (!ok) wrong.push(`${mod} → ${dep}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
