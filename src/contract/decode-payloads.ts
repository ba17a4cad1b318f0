import { arrayFromPayloads, type LoadedDataConverter, type Payload } from '@temporalio/common';

/**
 * The values of payloads a client read from Temporal (a history event's input, an activity's heartbeat details):
 * decoded by the client's codecs, last codec first, then converted. The same steps as the SDK's own decoding,
 * through its public API only.
 */
export async function decodePayloads(
  converter: LoadedDataConverter,
  payloads: Payload[] | null | undefined,
): Promise<unknown[]> {
  if (payloads == null) return [];
  let decoded = payloads;
  for (const codec of [...converter.payloadCodecs].reverse()) decoded = await codec.decode(decoded);
  return arrayFromPayloads(converter.payloadConverter, decoded);
}
