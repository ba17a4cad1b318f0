import { DurableToolsError } from '../contract/durable-tools-error';

/** A stream server that must not start as configured (a token is required beyond loopback). */
export class AgentRunStreamServerConfigError extends DurableToolsError<'INVALID_CONFIG'> {
  override readonly name = 'AgentRunStreamServerConfigError';
  constructor(message: string) {
    super(message, 'INVALID_CONFIG');
  }
}
