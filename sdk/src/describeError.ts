// What a crash report says about the thrown value, read without ever throwing.
import * as clean from './sanitize.js';

/**
 * An error's message (`TypeError: …`) and stack trace. Never throws: a name, message or stack
 * getter that throws (or a Proxy) is read as absent, and the crash is still reported.
 */
export function describeError(error: unknown): { message: string; stackTrace: string } {
  try {
    if (isError(error)) {
      const name = text(clean.readSafe(error, 'name'));
      const msg = text(clean.readSafe(error, 'message'));
      const stack = text(clean.readSafe(error, 'stack'));
      const head = name && name !== 'Error' && !msg.startsWith(name) ? `${name}: ` : '';
      const message = head + (msg || name || 'Error');
      return { message, stackTrace: stack || message };
    }
    const message = typeof error === 'string' ? error : safeJson(error);
    return { message, stackTrace: message };
  } catch {
    return { message: 'Error', stackTrace: 'Error' };
  }
}

function isError(x: unknown): x is Error {
  try {
    return x instanceof Error;
  } catch {
    return false;
  }
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function safeJson(x: unknown): string {
  try {
    return JSON.stringify(clean.jsonSafe(x)) ?? String(x);
  } catch {
    return 'non-serialisable value';
  }
}
