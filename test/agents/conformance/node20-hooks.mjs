// Module hooks: give the conformance runner's `fs` import the stand-in of node20-fs.mjs.
export async function resolve(specifier, context, next) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL?.includes('/@modelcontextprotocol/conformance/')
  )
    return { url: new URL('./node20-fs.mjs', import.meta.url).href, shortCircuit: true };
  return next(specifier, context);
}
