/** Types of scripts/build-cli.mjs, for the tests that build the CLI. */
export declare const DEFAULT_OUT: string;
export declare function buildCli(options?: { out?: string; ifStale?: boolean }): Promise<string>;
