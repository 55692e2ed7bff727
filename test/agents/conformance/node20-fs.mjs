// The conformance runner imports fs.globSync (Node 22+) for its client-mode result summaries only;
// server mode never calls it. On Node 20 this module stands in for `fs` inside the runner.
export * from 'node:fs';
export { default } from 'node:fs';
export function globSync() {
  throw new Error('fs.globSync needs Node 22; the conformance server mode does not use it');
}
