import type { PostgresRepos } from '../repos/index.ts';
import { fingerprintRulesRepo, type StoredFingerprintRule } from '../repos/fingerprintRules.ts';
import {
  fingerprintRuleProblems,
  MAX_RULES_PER_PROJECT,
  type FingerprintMatch,
  type FingerprintRuleSpec,
} from '../domain/fingerprintRules.ts';
import { NotFoundError, ProjectNotFoundError, ValidationError } from '../domain/errors.ts';
import { ttlCache } from './ttlCache.ts';

export interface FingerprintRuleInput {
  match?: FingerprintMatch;
  fingerprint?: string[];
  /** Where the rule goes in the project's order (0 is read first); absent: last, or where it is. */
  position?: number;
}

export type { StoredFingerprintRule };

/**
 * A project's fingerprint rules: the management API's and the dashboard's use cases. Callers
 * have already checked access to the project. Edits of one project take turns (its row is
 * locked), so the cap and the order hold under concurrent requests.
 */
export function fingerprintRulesService(
  repos: Pick<PostgresRepos, 'pg' | 'projects'>,
  opts: { cacheMs?: number } = {},
) {
  const { pg: db, projects } = repos;
  const stored = fingerprintRulesRepo(db);
  // The crash path reads a project's rules on every crash: kept a few seconds per process
  // (this process's edits drop its entry at once; another process's show within cacheMs).
  const cache = ttlCache(opts.cacheMs ?? 5_000, (projectId) => stored.list(projectId));
  const changed = (projectId: string) => cache.forget(projectId);

  async function project(projectId: string) {
    if (!(await projects.getProject(projectId))) throw new ProjectNotFoundError();
  }

  function checked(spec: FingerprintRuleSpec): FingerprintRuleSpec {
    const problems = fingerprintRuleProblems(spec);
    if (problems.length) throw new ValidationError(problems);
    return spec;
  }

  /** Moves `id` to `position` (clamped to the list) and numbers the list densely. */
  function ordered(ids: string[], id: string, position: number | undefined): string[] {
    const rest = ids.filter((x) => x !== id);
    const at =
      position === undefined ? (ids.includes(id) ? ids.indexOf(id) : rest.length) : Math.min(position, rest.length);
    return [...rest.slice(0, at), id, ...rest.slice(at)];
  }

  return {
    async list(projectId: string): Promise<StoredFingerprintRule[]> {
      await project(projectId);
      return stored.list(projectId);
    },

    async get(projectId: string, id: string): Promise<StoredFingerprintRule> {
      const r = await stored.get(projectId, id);
      if (!r) throw new NotFoundError('Fingerprint rule not found');
      return r;
    },

    async create(
      projectId: string,
      input: Required<Pick<FingerprintRuleInput, 'match' | 'fingerprint'>> & FingerprintRuleInput,
    ): Promise<StoredFingerprintRule> {
      const spec = checked({ match: input.match, fingerprint: input.fingerprint });
      const id = await db.tx(async (q) => {
        const rules = fingerprintRulesRepo(q);
        if (!(await rules.lockProject(projectId))) throw new ProjectNotFoundError();
        const ids = (await rules.list(projectId)).map((r) => r.id);
        if (ids.length >= MAX_RULES_PER_PROJECT) {
          throw new ValidationError([
            { path: '', message: `a project holds at most ${MAX_RULES_PER_PROJECT} fingerprint rules` },
          ]);
        }
        const newId = await rules.insert(projectId, ids.length, spec.match, spec.fingerprint);
        await rules.renumber(projectId, ordered([...ids, newId], newId, input.position));
        return newId;
      });
      changed(projectId);
      return this.get(projectId, id);
    },

    async update(projectId: string, id: string, patch: FingerprintRuleInput): Promise<StoredFingerprintRule> {
      await db.tx(async (q) => {
        const rules = fingerprintRulesRepo(q);
        if (!(await rules.lockProject(projectId))) throw new ProjectNotFoundError();
        const cur = await rules.get(projectId, id);
        if (!cur) throw new NotFoundError('Fingerprint rule not found');
        const spec = checked({ match: patch.match ?? cur.match, fingerprint: patch.fingerprint ?? cur.fingerprint });
        await rules.replace(projectId, id, spec.match, spec.fingerprint);
        if (patch.position !== undefined) {
          await rules.renumber(
            projectId,
            ordered(
              (await rules.list(projectId)).map((r) => r.id),
              id,
              patch.position,
            ),
          );
        }
      });
      changed(projectId);
      return this.get(projectId, id);
    },

    async remove(projectId: string, id: string): Promise<void> {
      await db.tx(async (q) => {
        const rules = fingerprintRulesRepo(q);
        if (!(await rules.lockProject(projectId))) throw new ProjectNotFoundError();
        if (!(await rules.remove(projectId, id))) throw new NotFoundError('Fingerprint rule not found');
        await rules.renumber(
          projectId,
          (await rules.list(projectId)).map((r) => r.id),
        );
      });
      changed(projectId);
    },

    /** The rules a crash of the project is grouped under, in order (cached for cacheMs). */
    rulesOf(projectId: string): Promise<StoredFingerprintRule[]> {
      return cache.get(projectId);
    },
  };
}

export type FingerprintRulesService = ReturnType<typeof fingerprintRulesService>;
