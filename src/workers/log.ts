/** The slice of a pino logger the workers use (Fastify's app.log and a plain pino both fit). */
export interface WorkerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLog: WorkerLog = { info() {}, warn() {}, error() {} };
