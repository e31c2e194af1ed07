import type { TraceMap } from '@jridgewell/trace-mapping';
import { ValidationError } from '../domain/errors.ts';
import {
  jsFilesOf,
  mapNameFor,
  minifiedNameFor,
  parseProguardMapping,
  readSourceMap,
  sourceMappingUrl,
  symbolicate,
  SourceMapTooLargeError,
  type ProguardMapping,
  type SymbolicatedStack,
} from '../domain/symbolication/index.ts';
import { releaseCandidates } from '../domain/symbolication/release.ts';
import { sourceContext, type FrameSource } from '../domain/symbolication/sourceContext.ts';
import type { ArtifactInfo, ArtifactKind, ArtifactsRepo } from '../repos/artifacts.ts';
import { WeightedLru } from './weightedLru.ts';
import { BoundedMap } from '../lib/boundedMap.ts';

type Parsed =
  | { kind: 'map'; map: TraceMap }
  | { kind: 'proguard'; mapping: ProguardMapping }
  | { kind: 'ref'; ref: string | null }
  | { kind: 'bad' };

/** How long a process trusts its list of a release's artifacts (an upload in this process clears it at once). */
const INDEX_TTL_MS = 30_000;
const INDEX_MAX = 10_000;

/**
 * Uploads of a release's artifacts, and stacks read with them: at record time (the stack a
 * crash is grouped on) and at read time (a mapping uploaded after the crash still shows its
 * stack symbolicated; the group does not move). Parsed maps stay in a bounded LRU, a release's
 * artifact list for INDEX_TTL_MS. An artifact that cannot be parsed leaves the frames it maps
 * raw and is named in `unreadable`; a store that cannot be read throws (the crash pipeline
 * retries its batch), never a crash grouped on a raw stack it would not have had.
 */
export function symbolicationService(
  repo: ArtifactsRepo,
  opts: {
    maxBytes: number;
    projectMaxBytes: number;
    cacheBytes: number;
    maxDecodedBytes: number;
  },
) {
  const parsed = new WeightedLru<Parsed>(opts.cacheBytes);
  const index = new BoundedMap<string, { at: number; refs: ArtifactInfo[] }>(INDEX_MAX);

  /** An upload or a removal in this process is seen by its next crash, not after INDEX_TTL_MS. */
  function forgetProject(projectId: string): void {
    for (const k of [...index.keys()]) if (k.startsWith(`${projectId}\n`)) index.delete(k);
  }

  /** The artifacts a crash of this app version and build reads: an exact version+build upload wins over a version-wide one of the same kind and name. */
  async function refsFor(projectId: string, appVersion: string | null, build: string | null): Promise<ArtifactInfo[]> {
    const releases = releaseCandidates(appVersion, build);
    if (releases.length === 0) return [];
    const key = `${projectId}\n${releases.join('\n')}`;
    const hit = index.get(key);
    if (hit && Date.now() - hit.at < INDEX_TTL_MS) return hit.refs;
    const all = await repo.list(projectId, releases);
    const seen = new Set<string>();
    const refs: ArtifactInfo[] = [];
    for (const r of releases) {
      for (const a of all) {
        if (a.release !== r || seen.has(`${a.kind}\n${a.name}`)) continue;
        seen.add(`${a.kind}\n${a.name}`);
        refs.push(a);
      }
    }
    index.set(key, { at: Date.now(), refs });
    return refs;
  }

  async function load(projectId: string, a: ArtifactInfo): Promise<Parsed> {
    const key = `${a.id}:${a.sha256}`;
    const cached = parsed.get(key);
    if (cached) return cached;
    // A store error propagates: the artifact is fine, the read is what failed. Stored bytes
    // that do not inflate (zlib's Z_* codes) are the artifact's fault.
    const bytes = await repo.content(projectId, a.id).catch((err: unknown) => {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('Z_')) return null;
      throw err;
    });
    let p: Parsed = { kind: 'bad' };
    // a reference takes next to nothing; a mapping a few times its text; a source map what its
    // decoded form holds (one stored before uploads were bounded is refused here as it would be now)
    let weight = 256;
    if (bytes) {
      try {
        if (a.kind === 'sourcemap') {
          const r = readSourceMap(bytes, opts.maxDecodedBytes);
          p = { kind: 'map', map: r.map };
          weight = r.size.bytes;
        } else if (a.kind === 'proguard') {
          p = { kind: 'proguard', mapping: parseProguardMapping(bytes.toString('utf8')) };
          weight = a.size * 3;
        } else {
          p = { kind: 'ref', ref: sourceMappingUrl(bytes.toString('utf8')) };
        }
      } catch {
        p = { kind: 'bad' };
      }
    }
    parsed.set(key, p, weight);
    return p;
  }

  /** The parsed source map of each JavaScript file of a stack that has one, and the names of the maps used. */
  async function jsMaps(
    refs: ArtifactInfo[],
    stack: string,
    loaded: (a: ArtifactInfo) => Promise<Parsed>,
  ): Promise<{ maps: Map<string, TraceMap>; used: Set<string> }> {
    const maps = new Map<string, TraceMap>();
    const used = new Set<string>();
    for (const path of jsFilesOf(stack)) {
      const minified = minifiedNameFor(path, refs);
      let ref: string | null = null;
      if (minified) {
        const m = refs.find((a) => a.kind === 'minified' && a.name === minified);
        const p = m ? await loaded(m) : null;
        ref = p?.kind === 'ref' ? p.ref : null;
      }
      const name = mapNameFor(path, refs, () => ref);
      const art = name ? refs.find((a) => a.kind === 'sourcemap' && a.name === name) : undefined;
      const p = art ? await loaded(art) : null;
      if (art && p?.kind === 'map') {
        maps.set(path, p.map);
        used.add(art.name);
      }
    }
    return { maps, used };
  }

  async function read(
    projectId: string,
    appVersion: string | null,
    build: string | null,
    stack: string,
    message: string,
  ): Promise<SymbolicatedStack> {
    const unchanged = { stack, message, mapped: 0 };
    const refs = await refsFor(projectId, appVersion, build);
    if (refs.length === 0) return unchanged;
    const unreadable: string[] = [];
    const loaded = async (a: ArtifactInfo) => {
      const p = await load(projectId, a);
      if (p.kind === 'bad' && !unreadable.includes(a.name)) unreadable.push(a.name);
      return p;
    };
    const proguardRef = refs.find((a) => a.kind === 'proguard');
    const proguard = proguardRef ? await loaded(proguardRef) : null;
    const { maps, used } = await jsMaps(refs, stack, loaded);
    if (proguardRef && proguard?.kind === 'proguard') used.add(proguardRef.name);
    const flagged = unreadable.length > 0 ? { unreadable } : {};
    if (maps.size === 0 && proguard?.kind !== 'proguard') return { ...unchanged, ...flagged };
    try {
      const r = symbolicate(stack, message, {
        jsMapFor: (path) => maps.get(path) ?? null,
        proguard: proguard?.kind === 'proguard' ? proguard.mapping : null,
      });
      return { ...r, ...flagged };
    } catch {
      // No I/O here: a parsed artifact the mapper trips on is as bad as one that did not parse.
      return { ...unchanged, unreadable: [...new Set([...unreadable, ...used])] };
    }
  }

  return {
    /**
     * The stack (and message) as the release's artifacts read it; unchanged when it has none,
     * and flagged when one could not be parsed. Throws when the artifacts cannot be read (a
     * store error): the caller retries, it does not group on the raw stack.
     */
    symbolicate: read,

    /**
     * Source lines around each JavaScript frame the release's source maps map, from their
     * `sourcesContent` (bounded: domain/symbolication/sourceContext.ts); [] when none does or an
     * artifact cannot be read.
     */
    async sourceContext(
      projectId: string,
      appVersion: string | null,
      build: string | null,
      stack: string,
    ): Promise<FrameSource[]> {
      try {
        const refs = await refsFor(projectId, appVersion, build);
        if (!refs.some((a) => a.kind === 'sourcemap')) return [];
        const { maps } = await jsMaps(refs, stack, (a) => load(projectId, a));
        return maps.size === 0 ? [] : sourceContext(stack, (path) => maps.get(path) ?? null);
      } catch {
        return [];
      }
    },

    /**
     * Stores an artifact after checking it reads as its kind (a source map as version 3 JSON, a
     * mapping as R8/ProGuard text with at least one class), so a wrong file is a 422 at upload
     * rather than a stack silently left raw.
     */
    async upload(projectId: string, release: string, kind: ArtifactKind, name: string, content: Buffer) {
      if (content.length === 0) throw new ValidationError([{ path: '/body', message: 'must not be empty' }]);
      if (content.length > opts.maxBytes)
        throw new ValidationError([
          { path: '/body', message: `must be at most ${opts.maxBytes} bytes (ARTIFACT_MAX_BYTES)` },
        ]);
      if (kind === 'sourcemap') {
        try {
          readSourceMap(content, opts.maxDecodedBytes);
        } catch (e) {
          if (e instanceof SourceMapTooLargeError) {
            throw new ValidationError([
              {
                path: '/body',
                message: `is a source map that ${e.message}, more than ${opts.maxDecodedBytes} bytes (ARTIFACT_MAX_DECODED_BYTES)`,
              },
            ]);
          }
          throw new ValidationError([{ path: '/body', message: `is not a source map: ${(e as Error).message}` }]);
        }
      }
      if (kind === 'proguard' && parseProguardMapping(content.toString('utf8')).classes.size === 0) {
        throw new ValidationError([
          { path: '/body', message: 'is not an R8/ProGuard mapping: no "original -> obfuscated:" class line' },
        ]);
      }
      const r = await repo.put(projectId, release, kind, name, content, opts.projectMaxBytes);
      forgetProject(projectId);
      return r;
    },

    list: (projectId: string, release: string) => repo.list(projectId, [release]),

    /** The memory the parsed artifacts in the cache are charged with (at most ARTIFACT_CACHE_BYTES). */
    cachedBytes: () => parsed.weight,

    async remove(projectId: string, release: string, one?: { kind: ArtifactKind; name: string }) {
      const n = await repo.remove(projectId, release, one);
      forgetProject(projectId);
      return n;
    },
  };
}

export type SymbolicationService = ReturnType<typeof symbolicationService>;
