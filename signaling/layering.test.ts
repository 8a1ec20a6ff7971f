import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const rules = join(root, '.ci/dependency-rules.cjs');
const depcruise = join(root, 'node_modules/.bin/depcruise');
const scratch = mkdtempSync(join(tmpdir(), 'parley-layers-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Cruises a small tree laid out like ours; returns depcruise's report (exit code ignored). */
async function cruise(files: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(scratch, 'tree-'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, noEmit: true } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const tops = [...new Set(Object.keys(files).map((path) => path.split('/')[0]!))];
  const result = await run(depcruise, ['--config', rules, '--output-type', 'err', ...tops], { cwd: dir }).catch((e: { stdout: string }) => e);
  return result.stdout;
}

describe('the layering rules', () => {
  it('hold for this repository', async () => {
    const { stdout } = await run(depcruise, ['--config', rules, '--output-type', 'err', 'media', 'session', 'signaling', 'client', 'bench'], { cwd: root }).catch((e: { stdout: string }) => e);
    // On failure the report names each broken rule and the offending import.
    expect(stdout).toContain('no dependency violations found');
    // ~4 s of CPU for the whole tree; at load 18 it took longer than the default 20 s.
  }, 60_000);

  // One tree with a wrong arrow per rule (and one right one), cruised once: each wrong arrow must
  // be reported under its rule's name, from its own file; the right one must not be reported.
  const wrong: Array<[rule: string, from: string, files: Record<string, string>]> = [
    ['media-imports-nothing-of-ours', 'media/pcm.ts', { 'media/pcm.ts': "import { x } from '../session/core1.ts';\nexport const y = x;\n", 'session/core1.ts': 'export const x = 1;\n' }],
    ['session-stays-below-signaling', 'session/core2.ts', { 'session/core2.ts': "import { x } from '../signaling/server.ts';\nexport const y = x;\n", 'signaling/server.ts': 'export const x = 1;\n' }],
    ['client-takes-only-protocol-types', 'client/src/a.ts', { 'client/src/a.ts': "import { x } from '../../session/protocol/server.ts';\nexport const y = x;\n", 'session/protocol/server.ts': 'export const x = 1;\nexport type X = number;\n' }],
    ['client-types-only-from-protocol', 'client/src/b.ts', { 'client/src/b.ts': "import type { X } from '../../session/core3.ts';\nexport type Y = X;\n", 'session/core3.ts': 'export type X = number;\n' }],
    ['e2e-kits-stay-in-e2e', 'session/tools/a.test.ts', { 'session/tools/a.test.ts': "import { x } from '../e2e/tools/kit.ts';\nexport const y = x;\n", 'session/e2e/tools/kit.ts': 'export const x = 1;\n' }],
    ['no-circular', 'session/a.ts', { 'session/a.ts': "import { b } from './b.ts';\nexport const a = b;\n", 'session/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n" }],
  ];
  const right = { 'client/src/typed.ts': "import type { X } from '../../session/protocol/server.ts';\nexport type Y = X;\n" };
  let report: Promise<string> | undefined;
  const tree = (): Promise<string> => (report ??= cruise(Object.assign({}, ...wrong.map(([, , files]) => files), right)));

  it.each(wrong)('name the rule a wrong arrow breaks: %s', async (rule, from) => {
    expect(await tree()).toContain(`error ${rule}: ${from}`);
  });

  it('let a protocol type into the browser library', async () => {
    expect(await tree()).not.toContain('client/src/typed.ts');
  });
});

describe('the size of product files', () => {
  it('no product file is over 300 lines (a longer one is split by responsibility)', () => {
    const product = ['media', 'session', 'signaling', 'client/src'].flatMap((top) =>
      (readdirSync(join(root, top), { recursive: true }) as string[])
        .filter((path) => /\.(ts|mjs)$/.test(path) && !/\.(test|d)\.m?ts$/.test(path) && !/(^|\/)(testing|e2e)\//.test(path))
        .map((path) => join(top, path)),
    );
    expect(product.length).toBeGreaterThan(100);
    const long = product.map((path) => [path, readFileSync(join(root, path), 'utf8').split('\n').length - 1] as const).filter(([, lines]) => lines > 300);
    expect(long).toEqual([]);
  });
});
