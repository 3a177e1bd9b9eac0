import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/per-file.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each worker process keeps its loaded modules from one test file to the next: importing Herald (ORM, MCP SDK, 32
    // providers) took about 3 s per file, a third of CI's time. Safe because no test mocks modules, stubs globals or
    // changes process.env, and every test starts Herald with its own database, data directory and port.
    isolate: false,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
