/**
 * `tsx bench/profileTop.ts <file.cpuprofile> [n]`: the top self-time functions of a V8 CPU
 * profile (from `node --cpu-prof`, e.g. BENCH_CPU_PROF_DIR=… npm run bench), as a table.
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
}
const [file, nArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/profileTop.ts <file.cpuprofile> [n]');
  process.exit(2);
}
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: Node[]; startTime: number; endTime: number };
const self = new Map<string, number>();
let total = 0;
for (const n of prof.nodes) {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^.*\/(node_modules\/|src\/)/, '$1')}:${f.lineNumber + 1}` : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + n.hitCount);
  total += n.hitCount;
}
const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(nArg ?? 30));
console.log(`${total} samples over ${((prof.endTime - prof.startTime) / 1e6).toFixed(1)} s`);
for (const [k, v] of top) console.log(`${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
