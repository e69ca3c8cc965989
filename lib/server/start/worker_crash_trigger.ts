/**
 * Test-only: the way a test makes a `--workers` worker thread die of an uncaught error, as a
 * bug would, to see it restarted. Off unless the environment variable
 * `PLATFORM_TEST_WORKER_CRASH_DIR` names a directory (nothing in production sets it); then
 * worker N looks for the file `<dir>/crash-worker-N` every 50 ms and, once it is there,
 * removes it and throws from a timer (or, when the file says `reject`, leaves a promise
 * rejected): an error only the worker's crash handler (worker_thread.ts) catches.
 */

/** The environment variable that arms the trigger. */
export const CRASH_DIR_ENV = "PLATFORM_TEST_WORKER_CRASH_DIR";

/** Arms the trigger of worker `index` when the environment asks; returns its disarming. */
export function armCrashTrigger(index: number): () => void {
  let dir: string | undefined;
  try {
    dir = Deno.env.get(CRASH_DIR_ENV);
  } catch {
    return () => {}; // no --allow-env: never armed
  }
  if (!dir) return () => {};
  const file = `${dir}/crash-worker-${index}`;
  const timer = setInterval(() => {
    let how: string;
    try {
      how = Deno.readTextFileSync(file).trim();
      Deno.removeSync(file);
    } catch {
      return; // not asked (yet)
    }
    clearInterval(timer);
    const err = new Error(`worker ${index}: crashing as ${file} asked (${CRASH_DIR_ENV})`);
    if (how === "reject") void Promise.reject(err);
    else throw err;
  }, 50);
  return () => clearInterval(timer);
}
