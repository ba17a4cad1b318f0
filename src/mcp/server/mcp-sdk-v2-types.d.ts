/**
 * The MCP SDK v2 packages publish only `exports` (no `main` or `types`), which this project's TypeScript module
 * resolution (node10) does not read: their CommonJS type entries, named here. Node, tsx and Jest load the packages
 * through `exports` at run time.
 */
declare module '@modelcontextprotocol/server' {
  export * from '@modelcontextprotocol/server/dist/index.cjs';
}
declare module '@modelcontextprotocol/client' {
  export * from '@modelcontextprotocol/client/dist/index.cjs';
}
