import { transform } from 'esbuild';
import { generatedPositionFor, TraceMap } from '@jridgewell/trace-mapping';

/**
 * A real minified bundle and its source map for the symbolicated crash storm (crashStorm.ts,
 * BENCH_SOURCEMAP=1): esbuild minifies four nested functions, and the stack names each frame at
 * the minified position of its call, so the service reads every frame back through the map.
 */
const SOURCE = `function render(state) {
  return state.view.title.length;
}
function update(state) {
  return render(state) + 1;
}
function loop(state) {
  return update(state) * 2;
}
export function main(state) {
  return loop(state);
}
`;

/** [function, original line] of each frame, innermost first (the lines of SOURCE above). */
const FRAMES: [string, number][] = [
  ['render', 2],
  ['update', 5],
  ['loop', 8],
  ['main', 11],
];

export const BUNDLE_NAME = 'app.min.js';

export async function minifiedStorm(): Promise<{ map: string; stack: string }> {
  const out = await transform(SOURCE, {
    minify: true,
    format: 'esm',
    sourcemap: 'external',
    sourcefile: 'src/app.js',
  });
  const traced = new TraceMap(out.map);
  const frames = FRAMES.map(([fn, line]) => {
    const pos = generatedPositionFor(traced, { source: 'src/app.js', line, column: 2 });
    if (pos.line === null) throw new Error(`no minified position for ${fn} (line ${line})`);
    // a browser's frame: the minified name is lost, the position is 1-based
    return `    at ${fn.slice(0, 1)} (https://cdn.example.com/static/${BUNDLE_NAME}:${pos.line}:${pos.column + 1})`;
  });
  return {
    map: out.map,
    stack: `TypeError: Cannot read properties of undefined (reading 'title')\n${frames.join('\n')}`,
  };
}
