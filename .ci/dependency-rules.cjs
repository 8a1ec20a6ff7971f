/**
 * The layering, checked by `npm test` (dependency-cruiser): arrows run down,
 * media ← session ← signaling; the browser library takes only types (and the zod-free limits)
 * from the protocol vocabulary. A wrong arrow fails with the rule's name and comment.
 */
const TESTS = '(\\.test\\.ts$|/testing/|/e2e/)';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import circles make layers impossible to read or test alone: break the circle.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'media-imports-nothing-of-ours',
      comment: 'media/ is the bottom layer (audio, codecs, peers): it must not know sessions, signaling or the client.',
      severity: 'error',
      from: { path: '^media/' },
      to: { path: '^(session|signaling|client|bench)/' },
    },
    {
      name: 'session-stays-below-signaling',
      comment: 'session/ is the transport-agnostic core: it may import media/ and its own protocol, never signaling/, client/ or bench/. End-to-end tests live in session/e2e/.',
      severity: 'error',
      from: { path: '^session/', pathNot: '^session/e2e/' },
      to: { path: '^(signaling|client|bench)/' },
    },
    {
      name: 'e2e-kits-stay-in-e2e',
      comment: 'End-to-end kits start the real server: unit tests and product code use session/testing/ instead.',
      severity: 'error',
      from: { pathNot: '/e2e/' },
      to: { path: '/e2e/' },
    },
    {
      name: 'session-product-code-does-not-import-tests',
      comment: 'Shipped code must not depend on test helpers.',
      severity: 'error',
      from: { path: '^(media|session|signaling)/', pathNot: TESTS },
      to: { path: TESTS },
    },
    {
      name: 'signaling-does-not-import-client',
      comment: 'signaling/ serves the client bundle by path; it must not import client code.',
      severity: 'error',
      from: { path: '^signaling/', pathNot: TESTS },
      to: { path: '^client/' },
    },
    {
      name: 'client-takes-only-protocol-types',
      comment: 'The browser library must stay free of zod and Node: from the server it takes types of session/protocol/ only (import type), plus the zod-free limits.',
      severity: 'error',
      from: { path: '^client/src/', pathNot: TESTS },
      to: { path: '^(session|signaling|media)/', pathNot: '^session/protocol/limits\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'client-types-only-from-protocol',
      comment: 'Types the browser library shares with the server come from session/protocol/ only.',
      severity: 'error',
      from: { path: '^client/src/', pathNot: TESTS },
      to: { path: '^(session|signaling|media)/', pathNot: '^session/protocol/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve.',
      severity: 'error',
      from: {},
      // The demo page imports the browser library by the URL the server serves it at (/client.js).
      to: { couldNotResolve: true, pathNot: '^/client\\.js$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.json'], exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
