// Runs around every test file (vitest setupFiles). Its afterAll runs after the file's own (hooks run as a stack): once
// the file has stopped its Herald instances, the databases this worker made for it are dropped.
import { afterAll, inject } from 'vitest';
import { dropDatabasesOf } from './template-database.js';

afterAll(async () => {
  await dropDatabasesOf(inject('adminUrl'), process.pid);
});
