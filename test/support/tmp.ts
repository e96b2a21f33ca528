import os from 'node:os';
import path from 'node:path';

/**
 * A path for a file a test writes and removes itself (e.g. a gateway's LOG_FILE), inside the test
 * run's own folder (TEST_TMP_DIR, made by global-setup.ts), which global-teardown.ts requires to be
 * empty at the end: a file left behind, or written again after its test removed it, fails the run.
 */
export function testTmpPath(name: string): string {
  return path.join(process.env.TEST_TMP_DIR ?? os.tmpdir(), name);
}
