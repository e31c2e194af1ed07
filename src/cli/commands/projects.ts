import type { ListAnswer, ProjectAnswer, ProjectCreatedAnswer } from '../answers.ts';
import { type Args, id, list, need, projectId } from '../args.ts';
import { fail } from '../errors.ts';
import { table } from '../output.ts';
import { USAGE } from '../usage.ts';
import type { ApiCommand } from './command.ts';

const teamChange = (a: Args): Record<string, string | null> | null => {
  if (a.values.owner) return { teamOwnerEmail: a.values.owner };
  if (a.values.team) return { teamId: id(a.values.team, '--team', 'team') };
  if (a.values['no-team']) return { teamId: null };
  return null;
};

const projectRoute = (a: Args) => `/api/projects/${projectId(a)}`;

const projectLine = (json: unknown) => {
  const project = json as ProjectAnswer;
  return `Project ${project.name} (${project.id})${project.teamId ? `, team ${project.teamId}` : ', no team'}`;
};

export const projects: Record<string, ApiCommand> = {
  'projects list': {
    request: () => ({ method: 'GET', route: '/api/projects' }),
    show: (json) =>
      table((json as ListAnswer<ProjectAnswer>).items, [
        ['ID', (p) => p.id],
        ['NAME', (p) => p.name],
        ['TEAM', (p) => p.teamId ?? 'none'],
        ['CREATED', (p) => p.createdAt],
      ]),
  },
  'projects create': {
    request(a) {
      // A bad --team ends the CLI here: found after the POST, it left a project given to no team.
      teamChange(a);
      return { method: 'POST', route: '/api/projects', body: { name: need(a.values.name, '--name') } };
    },
    // A project created with --owner/--team is given to that team in a second request.
    async after(answer, call, a) {
      const team = teamChange(a);
      if (!answer.res.ok || !team) return answer;
      const created = answer.json as ProjectCreatedAnswer;
      const given = await call('PATCH', `/api/projects/${created.project.id}`, team);
      if (given.res.ok) return { ...given, json: { ...created, project: given.json } };
      console.error(
        `The project ${created.project.id} was created (API key, shown once: ${created.apiKey}) but not given to the team:`,
      );
      return given;
    },
    show(json) {
      const { project, apiKey } = json as ProjectCreatedAnswer;
      const lines = [`Project ${project.name} (${project.id})\nAPI key (shown once, keep it): ${apiKey}`];
      if (!project.teamId) {
        // Without a team no dashboard user sees the project, and its alert links open nothing.
        lines.push(
          `\nIt belongs to no team yet, so no one sees it in the dashboard. Give it to yours:\n` +
            `  npm run cli -- projects set-team --project ${project.id} --owner you@example.com`,
        );
      }
      return lines.join('\n');
    },
  },
  'projects get': {
    request: (a) => ({ method: 'GET', route: projectRoute(a) }),
  },
  'projects rename': {
    request: (a) => ({ method: 'PATCH', route: projectRoute(a), body: { name: need(a.values.name, '--name') } }),
    show: projectLine,
  },
  'projects set-team': {
    request: (a) => ({
      method: 'PATCH',
      route: projectRoute(a),
      body: teamChange(a) ?? fail(`Missing --owner EMAIL, --team ID or --no-team\n\n${USAGE}`),
    }),
    show: projectLine,
  },
  'projects set-alert-emails': {
    request: (a) => {
      const route = projectRoute(a);
      const emails = list(a.values.emails);
      return { method: 'PATCH', route, body: { alertEmails: emails.length ? emails : null } };
    },
  },
  'projects set-origins': {
    request: (a) => {
      const route = projectRoute(a);
      const origins = list(a.values.origins);
      const none = (a.values.origins ?? '').trim().toLowerCase() === 'none';
      return { method: 'PATCH', route, body: { allowedOrigins: none ? [] : origins.length ? origins : null } };
    },
  },
};
