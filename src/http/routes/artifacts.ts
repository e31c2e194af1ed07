import type { FastifyInstance } from 'fastify';
import { errorResponse } from '../schemas/ingest.ts';
import { adminOrKeyAuth } from '../auth.ts';
import { decodeBody } from '../bodyDecoding.ts';
import { HttpError } from '../errors.ts';
import { ProjectNotFoundError } from '../../domain/errors.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';
import { ARTIFACT_KINDS, type ArtifactKind } from '../../repos/artifacts.ts';
import { RELEASE_PATTERN } from '../../domain/symbolication/release.ts';
import { projectAccess } from './dashboard/common.ts';

const params = {
  type: 'object',
  required: ['projectId', 'release'],
  properties: {
    projectId: { type: 'string', format: 'uuid' },
    release: {
      type: 'string',
      pattern: RELEASE_PATTERN,
      description: 'the app version, or version+build ("1.4.0+312")',
    },
  },
} as const;

const uploadQuery = {
  type: 'object',
  required: ['name'],
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      pattern: '^[^\\u0000-\\u001f]+$',
      description:
        'the file name as deployed: "~/assets/index-8f3a2c.js.map", "index.android.bundle.map", "mapping.txt"',
    },
    kind: {
      type: 'string',
      enum: [...ARTIFACT_KINDS],
      description: 'default from the name: *.map → sourcemap, *.txt → proguard, else minified',
    },
  },
} as const;

const deleteQuery = {
  type: 'object',
  properties: { name: uploadQuery.properties.name, kind: uploadQuery.properties.kind },
} as const;

const artifact = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    release: { type: 'string' },
    kind: { type: 'string' },
    name: { type: 'string' },
    size: { type: 'integer', description: 'uncompressed bytes' },
    sha256: { type: 'string' },
    createdAt: { type: 'string' },
  },
} as const;

const errors = {
  400: errorResponse,
  401: errorResponse,
  403: errorResponse,
  404: errorResponse,
  413: errorResponse,
  422: errorResponse,
};

export const kindFromName = (name: string): ArtifactKind =>
  /\.map$/i.test(name) ? 'sourcemap' : /\.txt$/i.test(name) ? 'proguard' : 'minified';

/**
 * The artifact routes, the same under /api (admin token, or a key of the project with the
 * `upload` scope) and /api/dashboard (a signed-in member). The body is the file's raw bytes,
 * any content type, optionally Content-Encoding: gzip; its name and kind are query parameters.
 */
function artifactRoutes(svc: Services, tags: string[], security: Record<string, string[]>[] | undefined) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<import('../typeProvider.ts').SchemaTypes>();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: svc.config.artifacts.maxBytes }, (_req, body, done) =>
      done(null, body),
    );
    app.addHook('preParsing', decodeBody);

    const project = async (projectId: string) => {
      if (!(await svc.projects.getProject(projectId))) throw new ProjectNotFoundError();
    };
    const url = '/projects/:projectId/releases/:release/artifacts';

    r.post(
      url,
      {
        bodyLimit: svc.config.artifacts.maxBytes,
        schema: {
          tags,
          security,
          params,
          querystring: uploadQuery,
          description:
            'Uploads one source map, minified source or R8/ProGuard mapping.txt of a release (raw body). Re-uploading a name replaces it.',
          response: { 201: { type: 'object', properties: { artifact, replaced: { type: 'boolean' } } }, ...errors },
        },
      },
      async (req, reply) => {
        const { projectId, release } = req.params;
        await project(projectId);
        const body = req.body;
        if (!Buffer.isBuffer(body)) throw new HttpError(400, 'Send the file as the request body');
        const kind = req.query.kind ?? kindFromName(req.query.name);
        const put = await svc.symbols.upload(projectId, release, kind, req.query.name, body);
        if (put.outcome === 'over-quota') {
          throw new HttpError(
            413,
            `The project's artifacts would pass ${svc.config.artifacts.projectMaxBytes} bytes (ARTIFACT_PROJECT_MAX_BYTES; ${put.usedBytes} used): delete an old release's artifacts first`,
          );
        }
        return reply.code(201).send({ artifact: put.artifact, replaced: put.replaced });
      },
    );

    r.get(
      url,
      {
        schema: {
          tags,
          security,
          params,
          response: { 200: { type: 'object', properties: { data: { type: 'array', items: artifact } } }, ...errors },
        },
      },
      async (req) => {
        await project(req.params.projectId);
        return { data: await svc.symbols.list(req.params.projectId, req.params.release) };
      },
    );

    r.delete(
      url,
      {
        schema: {
          tags,
          security,
          params,
          querystring: deleteQuery,
          description:
            "Deletes a release's artifacts: all of them, or the one named (name, and kind when not implied by the name).",
          response: { 200: { type: 'object', properties: { deleted: { type: 'integer' } } }, ...errors },
        },
      },
      async (req) => {
        const { projectId, release } = req.params;
        await project(projectId);
        const name = req.query.name;
        const one = name ? { name, kind: req.query.kind ?? kindFromName(name) } : undefined;
        return { deleted: await svc.symbols.remove(projectId, release, one) };
      },
    );
  };
}

/** /api: the operator's token, or CI's key with the `upload` scope (never an app's ingest-only key). */
export const artifactApiRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onRequest', adminOrKeyAuth(svc.adminToken, svc.keys, 'upload'));
    await artifactRoutes(svc, ['symbolication'], [{ adminToken: [] }, { apiKey: [] }])(app);
  };

/** /api/dashboard: a member of the project's team (the dashboard's hooks run first). */
export const artifactDashboardRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('preHandler', projectAccess(svc.projects));
    await artifactRoutes(svc, ['dashboard'], undefined)(app);
  };
