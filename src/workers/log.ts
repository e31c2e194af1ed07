// The workers log through the one Log of src/domain/log.ts; the name stays for their signatures.
export type { Log as WorkerLog } from '../domain/log.ts';
