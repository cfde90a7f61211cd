/** Runs the admin CLI as a child process against the test database, as an operator would. */
import { execFile } from 'node:child_process';
import { testDb } from './db.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function admin(args: string[], env: Record<string, string> = {}, timeoutMs = 90000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/admin.ts', ...args],
      { env: { ...process.env, DATABASE_URL: testDb().url, EVENTSTORE_URL: '', LOG_LEVEL: 'silent', ...env }, timeout: timeoutMs },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}
