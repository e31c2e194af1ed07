import type { Args } from '../args.ts';
import type { Answer, Call } from '../http.ts';

/** A command that is one call of the management API, made with the admin token. */
export interface ApiCommand {
  /** The call, read from the command line: a mistake on it ends the CLI here, before any request. */
  request(a: Args): { method: string; route: string; body?: unknown };
  /** Runs after the call whatever its answer, and gives the answer to print. */
  after?(answer: Answer, call: Call, a: Args): Promise<Answer>;
  /** A successful answer as a person reads it; without it, "field: value" lines. */
  show?(json: unknown, a: Args): string;
}

/** A command that makes its own requests (uploads: a project key, a raw body). */
export interface RunCommand {
  run(a: Args, base: string): Promise<void>;
}

export type Command = ApiCommand | RunCommand;
