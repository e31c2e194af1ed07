import { type Args, id, need, projectId } from '../args.ts';
import type { ApiCommand } from './command.ts';

const groupRoute = (a: Args) =>
  `/api/projects/${projectId(a)}/crash-groups/${id(a.values.group, '--group', 'crash group')}`;

export const crashGroups: Record<string, ApiCommand> = {
  'crash-groups get': {
    request: (a) => ({ method: 'GET', route: groupRoute(a) }),
  },
  'crash-groups set-status': {
    request: (a) => ({ method: 'PATCH', route: groupRoute(a), body: { status: need(a.values.status, '--status') } }),
    show(json) {
      const group = json as { id: string; status: string };
      return `Crash group ${group.id}: ${group.status}`;
    },
  },
};
