/**
 * At most `max` streamed exports at once per project, in this process. A stream holds
 * connections, buffers and the store for as long as its client reads; without a cap one key
 * could open dozens and starve the others.
 */
export class StreamSlots {
  private readonly active = new Map<string, number>();

  constructor(readonly max: number) {}

  /** A release function (idempotent), or null when the project has `max` streams open. */
  acquire(projectId: string): (() => void) | null {
    const n = this.active.get(projectId) ?? 0;
    if (n >= this.max) return null;
    this.active.set(projectId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.active.get(projectId) ?? 1) - 1;
      if (left <= 0) this.active.delete(projectId);
      else this.active.set(projectId, left);
    };
  }

  openFor(projectId: string): number {
    return this.active.get(projectId) ?? 0;
  }
}
