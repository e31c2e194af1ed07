/**
 * Buffers a spool reuses for its segments' in-memory copies. Bodies the spool kept as they
 * arrived lived until their load committed (half a second and more), long enough for V8 to
 * promote them, and every promoted buffer counts towards the old generation's limit as external
 * memory until a full collection frees it: at ~50 MB/s of bodies the JS thread ran 4-7 full
 * collections a second (docs/bench.md, "Session of 2026-11-28 (fourth)"). Copied into buffers
 * allocated once, the bodies die young and the arenas are never collected. A spool keeps a second
 * pool, one buffer per load lane, for the segments it reads back from disk (spool.ts, `readInto`).
 */
export class Arenas {
  private free: Buffer[] = [];
  private made = 0;

  constructor(
    /** Bytes of each arena: what one must hold (a segment in memory; a load's segments read back). */
    readonly capacity: number,
    /** Arenas at most (segments kept in memory at once; load lanes). */
    private readonly max: number,
  ) {}

  /** A free arena, or undefined when every one is in use (the caller then does without one). */
  take(): Buffer | undefined {
    const reused = this.free.pop();
    if (reused) return reused;
    if (this.made >= this.max) return undefined;
    this.made++;
    return Buffer.allocUnsafeSlow(this.capacity);
  }

  /** Only once nothing reads the arena's bytes any more: its next user overwrites them. */
  give(arena: Buffer): void {
    this.free.push(arena);
  }

  /** An arena that is not given back (something may still read it): another may be made in its place. */
  forget(): void {
    this.made--;
  }
}
