// The workers log through the one Log of src/lib/log.ts; the name stays for their signatures.
export type { Log as WorkerLog } from '../lib/log.ts';
