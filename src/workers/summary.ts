import type { Config } from '../config.ts';
import {
  cleanAiSummary,
  deterministicSummary,
  summaryPrompt,
  DETERMINISTIC_SOURCE,
  type CrashContext,
} from '../domain/crashSummary.ts';
import type { WorkerLog } from './log.ts';
import { loggableError } from '../lib/log.ts';

export interface Summary {
  summary: string;
  source: string;
}

export type Summarize = (c: CrashContext) => Promise<Summary>;

/**
 * With OPENAI_API_KEY: the model's summary, within one time budget that covers the client's own
 * retries; on any failure, or with no key, the deterministic summary, marked as such. It never
 * throws, so the email is never held up past the budget.
 */
export function createSummarizer(config: Pick<Config, 'openai' | 'summaryTimeoutMs'>, log: WorkerLog): Summarize {
  const ai = config.openai;
  const fallback = (c: CrashContext): Summary => ({ summary: deterministicSummary(c), source: DETERMINISTIC_SOURCE });
  if (!ai) return async (c) => fallback(c);

  const budget = config.summaryTimeoutMs;
  // The SDK loads with the first summary: a service without a key does not carry it.
  let client: Promise<import('openai').OpenAI> | undefined;
  const openai = () =>
    (client ??= import('openai').then(
      ({ OpenAI }) => new OpenAI({ apiKey: ai.apiKey, baseURL: ai.baseUrl, timeout: budget, maxRetries: 2 }),
    ));
  return async (c) => {
    const p = summaryPrompt(c);
    try {
      const res = await (await openai()).chat.completions.create(
        {
          model: ai.model,
          messages: [
            { role: 'system', content: p.system },
            { role: 'user', content: p.user },
          ],
          max_tokens: 200,
          temperature: 0.2,
        },
        { signal: AbortSignal.timeout(budget) },
      );
      const text = cleanAiSummary(res.choices[0]?.message?.content);
      if (text) return { summary: text, source: `openai:${ai.model}` };
      log.warn({ model: ai.model }, 'AI summary was empty; using the deterministic summary');
    } catch (err) {
      log.warn({ err: loggableError(err), model: ai.model }, 'AI summary failed; using the deterministic summary');
    }
    return fallback(c);
  };
}
