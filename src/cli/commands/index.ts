import { alertRules } from './alertRules.ts';
import type { Command } from './command.ts';
import { crashGroups } from './crashGroups.ts';
import { keys } from './keys.ts';
import { projects } from './projects.ts';
import { uploads } from './uploads.ts';
import { webhooks } from './webhooks.ts';

// A Map, not an object: a command named like an Object.prototype member ("toString") is unknown.
export const COMMANDS = new Map<string, Command>(
  Object.entries({ ...projects, ...keys, ...crashGroups, ...uploads, ...alertRules, ...webhooks }),
);
