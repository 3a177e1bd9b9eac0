// Types of scripts/build.mjs for the TypeScript that imports it (the test setup, the test helpers, the bench).
export declare const repositoryRoot: string;
export declare function build(planned?: { stale: string[]; orphans: string[]; manifestStale: boolean }): Promise<{ compiled: number; removed: number }>;
