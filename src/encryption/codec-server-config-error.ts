import { DurableToolsError } from '../contract/durable-tools-error';

/** A codec server that must not start as configured (a token is required beyond loopback). */
export class CodecServerConfigError extends DurableToolsError<'INVALID_CONFIG'> {
  override readonly name = 'CodecServerConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'INVALID_CONFIG', options);
  }
}
