/** The little of `oidc-provider` (an untyped ES module) that test/support/oidc-provider-main.ts uses. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** An OpenID provider: its configuration is checked by the package itself at construction. */
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
