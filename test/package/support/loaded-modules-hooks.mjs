// Module customization hooks (node:module register) for test/package/loaded-modules.test.ts:
// every URL the ES module loader resolves is posted to the port the registering thread passed.
// Plain JavaScript, so it registers in any child process, with or without a TypeScript loader.
let port;

export function initialize(data) {
  port = data.port;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  port?.postMessage(resolved.url);
  return resolved;
}
