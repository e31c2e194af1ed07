import type { KeyCreatedAnswer } from '../answers.ts';
import { id, list, projectId } from '../args.ts';
import type { ApiCommand } from './command.ts';

export const keys: Record<string, ApiCommand> = {
  'keys create': {
    request: (a) => ({
      method: 'POST',
      route: `/api/projects/${projectId(a)}/keys`,
      body:
        a.values.name || a.values.scopes
          ? {
              ...(a.values.name ? { name: a.values.name } : {}),
              ...(a.values.scopes ? { scopes: list(a.values.scopes) } : {}),
            }
          : undefined,
    }),
    show(json) {
      const { key, apiKey } = json as KeyCreatedAnswer;
      return `Key ${key.prefix}… ${key.name ? `"${key.name}" ` : ''}(${key.id})\nAPI key (shown once, keep it): ${apiKey}`;
    },
  },
  'keys deactivate': {
    request: (a) => ({ method: 'POST', route: `/api/keys/${id(a.arg, 'KEY_ID', 'key')}/deactivate` }),
    show: (_json, a) => `Key ${a.arg} deactivated`,
  },
};
