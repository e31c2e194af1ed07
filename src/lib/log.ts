/** The slice of a pino logger the services and workers use (Fastify's app.log and a plain pino both fit). */
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** For a process started without a logger (`logger: false`, as tests do). */
export const silentLog: Log = { info() {}, warn() {}, error() {} };

/**
 * What of an error may be logged: its class, message, code and stack. A store's error object
 * can carry the query and its bound parameters (user data, emails, tokens), which must not.
 */
export function loggableError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const e = err as Error & { code?: unknown };
  return {
    type: e.constructor.name,
    message: e.message,
    code: typeof e.code === 'string' ? e.code : undefined,
    stack: e.stack,
  };
}
