import { Connection } from '@temporalio/client';

/**
 * Whether a Temporal frontend answers at `address` and knows `namespace` (a short connection, closed again).
 * Used before starting a local server, to say whether a taken port belongs to a Temporal server.
 */
export async function answersAsTemporal(address: string, namespace: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 2000 });
    try {
      await connection.workflowService.describeNamespace({ namespace });
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}
