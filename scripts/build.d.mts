// Types of scripts/build.mjs for the TypeScript that imports it (the test setup, the bench).
export declare const repositoryRoot: string;
export declare const distDir: string;
export declare function plan(): { stale: string[]; orphans: string[]; manifestStale: boolean };
export declare function build(): Promise<{ compiled: number; removed: number }>;
