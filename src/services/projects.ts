import type { ProjectsRepo } from '../repos/projects.ts';
import type { ApiKeysRepo } from '../repos/apiKeys.ts';

/** Projects and their keys, as the management API and the dashboard use them. */
export function projectsService(projects: ProjectsRepo, keys: ApiKeysRepo) {
  return {
    createProject: projects.createProject,
    getProject: projects.getProject,
    setAlertEmails: projects.setAlertEmails,

    /** A new key for an existing project, or null when the project does not exist. */
    async createKey(projectId: string) {
      if (!(await projects.exists(projectId))) return null;
      return keys.insert(projectId);
    },

    deactivateKey: keys.deactivate,
    listKeys: keys.list,
    findKeyByHash: keys.findByHash,
  };
}

export type ProjectsService = ReturnType<typeof projectsService>;
