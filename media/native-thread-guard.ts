/**
 * The main thread's half of a guard for worker threads that call into native code (onnxruntime
 * for Silero, libpocketsphinx through koffi): a thread torn down in the middle of a native call
 * takes the whole process with it (FATAL ERROR napi_throw or Napi::Error, exit 134), and both
 * `worker.terminate()` and the process's exit tear threads down. Each thread shares two flags
 * with the main thread: [busy, stopping]. The thread sets busy before it checks stopping and
 * clears it after each native call; the main thread sets stopping before it reads busy, so one
 * of the two always sees the other. The worker side is a few lines in each thread's .mjs file.
 */
const BUSY = 0;
const STOPPING = 1;
/**
 * How long an exit waits for a native call in flight: a model load on a starved machine (the
 * pocketsphinx decoder took over 1 s with three busy processes on its core).
 */
const EXIT_WAIT_MS = 5000;

const live = new Set<Int32Array>();

/** A new thread's flags, watched by the process's exit until `release`. */
export function guardFlags(): Int32Array {
  if (live.size === 0) process.once('exit', quiesceAll);
  const flags = new Int32Array(new SharedArrayBuffer(8));
  live.add(flags);
  return flags;
}

/** The thread is gone: its flags need no more watching. */
export function release(flags: Int32Array): void {
  live.delete(flags);
  if (live.size === 0) process.off('exit', quiesceAll);
}

/**
 * No new native call starts on this thread; returns once the one in flight (if any) is over, or
 * after `waitMs`. Blocks the calling thread: for the exit, and for a terminate that must not
 * land inside a call.
 */
export function stopNativeWork(flags: Int32Array, waitMs = EXIT_WAIT_MS): void {
  Atomics.store(flags, STOPPING, 1);
  const deadline = Date.now() + waitMs;
  while (Atomics.load(flags, BUSY) === 1 && Date.now() < deadline) Atomics.wait(flags, BUSY, 1, 50);
}

function quiesceAll(): void {
  const deadline = Date.now() + EXIT_WAIT_MS;
  for (const flags of live) stopNativeWork(flags, Math.max(0, deadline - Date.now()));
}
