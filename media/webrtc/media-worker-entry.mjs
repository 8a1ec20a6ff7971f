// A media worker's entry point. Worker threads do not inherit a TypeScript loader from every
// launcher (vitest's forks, plain node), so the worker registers tsx itself, then loads the
// TypeScript worker module.
import { register } from 'tsx/esm/api';

register();
await import('./media-worker.ts');
