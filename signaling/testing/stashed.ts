import { MemoryResumeStash } from '../../session/resume/resume-stash.ts';
import type { ServerContext } from '../context.ts';

/** Conversations waiting in an in-process stash (tests without Redis wait for a drop to land there). */
export function stashed(context: ServerContext): number {
  const { stash } = context.stores;
  if (!(stash instanceof MemoryResumeStash)) throw new Error('stashed() counts an in-process stash only');
  return stash.size;
}
