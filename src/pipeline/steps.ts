import { classify, type ErrorClass } from './errors.ts';

export type StepOutcome = 'ok' | 'retryable' | 'permanent';

/** Told of every step that ran: its name, how it ended, how long it took (metrics). */
export type StepObserver = (step: string, outcome: StepOutcome, seconds: number) => void;

/** A step failed: which one, the policy's verdict on its error, and the error itself. */
export class StepError extends Error {
  constructor(
    readonly step: string,
    readonly verdict: ErrorClass,
    readonly cause: unknown,
  ) {
    super(`${step}: ${verdict.kind} (${verdict.reason}): ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/**
 * `runStep(name, fn)`: one named, timed unit of a pipeline whose failure leaves classified
 * (src/pipeline/errors.ts), so the pipeline decides on a verdict, never on an error's type.
 */
export function stepRunner(observe: () => StepObserver | undefined) {
  return async function runStep<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      const v = await fn();
      observe()?.(name, 'ok', (performance.now() - t0) / 1000);
      return v;
    } catch (err) {
      const verdict = err instanceof StepError ? err.verdict : classify(err);
      observe()?.(name, verdict.kind, (performance.now() - t0) / 1000);
      throw err instanceof StepError ? err : new StepError(name, verdict, err);
    }
  };
}

export type RunStep = ReturnType<typeof stepRunner>;
