/**
 * A release, as artifacts are uploaded for it: the app's version ("1.4.0"), or version and build
 * ("1.4.0+312") when one build has its own maps. A crash reads the artifacts of its session's
 * exact version+build first, then those uploaded for the whole version.
 */
export const RELEASE_PATTERN = '^[^/\\\\\\s+]{1,100}(\\+[^/\\\\\\s+]{1,100})?$';
const RELEASE = new RegExp(RELEASE_PATTERN);

export const isRelease = (r: string) => RELEASE.test(r);

/** The releases a crash of this version and build reads, most specific first. */
export function releaseCandidates(appVersion: string | null, build: string | null): string[] {
  if (!appVersion) return [];
  return build ? [`${appVersion}+${build}`, appVersion] : [appVersion];
}
